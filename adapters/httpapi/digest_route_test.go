package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestDigestRefusesARouteNotConfigured: a digest for a route that is not
// configured is refused with a 400 naming it, as one for an unknown person
// is; before, it was a 200 with empty lists, which reads as "nothing was
// asked there". The routes configured now apply: one a reload adds is
// taken, one it removes is refused.
func TestDigestRefusesARouteNotConfigured(t *testing.T) {
	e := newEnv(t)
	digest := func(route string) raw {
		return e.do("GET", "/v1/digest?since=2020-01-01T00:00:00Z&route="+route, &operator, "")
	}
	if r := digest("locked"); r.status != http.StatusOK {
		t.Fatalf("a configured route: %d %s", r.status, r.body)
	}
	refused := func(route string) {
		t.Helper()
		r := digest(route)
		if r.status != http.StatusBadRequest || !strings.Contains(errorOf(t, r).Message, `"`+route+`"`) {
			t.Errorf("route %s: %d %s, want 400 naming it", route, r.status, r.body)
		}
	}
	refused("nope")

	routes := coretest.APIRoutes()
	routes["later"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}}
	if err := e.svc.Reconfigure(core.Config{Routes: routes, ActorKey: []byte(coretest.ActorKey)}); err != nil {
		t.Fatal(err)
	}
	if r := digest("later"); r.status != http.StatusOK {
		t.Errorf("a route the reload added: %d %s", r.status, r.body)
	}
	refused("locked")
}

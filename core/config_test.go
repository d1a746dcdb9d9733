package core_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// A configuration with several bad routes is refused for the same one,
// the first by name, on every start (and so on every reload), not for
// whichever a map gave first.
func TestConfigNamesTheFirstBadRouteByName(t *testing.T) {
	st := coretest.OpenStore(t)
	bad := core.Route{StandingHours: -1}
	routes := map[string]core.Route{"d": bad, "b": bad, "c": bad, "a": {EscalateTo: "nowhere"}, "e": bad}
	for range 30 {
		_, err := core.New(st, core.Config{ActorKey: []byte("k"), Routes: routes}, nil)
		if err == nil || !strings.HasPrefix(err.Error(), `core: route "a": escalate_to`) {
			t.Fatalf("error %v, want route a's", err)
		}
	}
}

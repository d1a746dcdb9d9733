package app_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/internal/redistest"
)

// addrEnv is the environment of a healthcheck of the server at addr.
func addrEnv(addr string) func(string) string {
	return func(k string) string {
		if k == "ASKBRIDGE_ADDR" {
			return addr
		}
		return ""
	}
}

// TestHealthcheckLiveRidesOutAStoreOutage: with Redis out of reach,
// healthcheck (readiness) fails, and healthcheck --live, what the image's
// HEALTHCHECK runs, passes: a store outage must not have Swarm kill every
// replica. Before, there was only the readiness check, and the image
// asked it.
func TestHealthcheckLiveRidesOutAStoreOutage(t *testing.T) {
	srv := redistest.Start(t)
	link := newCutter(t, srv.Addr()) // failover_test.go
	m := apptest.Start(t, app.Settings{RedisURL: app.Secret("redis://" + link.addr())})
	env := addrEnv(strings.TrimPrefix(m.URL, "http://"))
	if code, out, errb := runAll(t.Context(), env, "", "healthcheck", "--live"); code != 0 || out != "serving\n" {
		t.Fatalf("healthcheck --live of a serving program: exit %d, stdout %q, stderr %q", code, out, errb)
	}
	link.cut() // to askbridge, Redis is gone
	if code, out, errb := runAll(t.Context(), env, "", "healthcheck"); code != app.ExitError || !strings.Contains(errb, "not ready") {
		t.Errorf("healthcheck with the store paused: exit %d, stdout %q, stderr %q; want %d, not ready", code, out, errb, app.ExitError)
	}
	if code, out, errb := runAll(t.Context(), env, "", "healthcheck", "--live"); code != 0 || out != "serving\n" {
		t.Errorf("healthcheck --live with the store paused: exit %d, stdout %q, stderr %q; want 0, serving", code, out, errb)
	}
}

// TestHealthcheckLiveAsksHealthz: --live asks /healthz on the port of
// ASKBRIDGE_ADDR, says why when it is not answered 200, and is refused
// beside --url, which names the whole URL.
func TestHealthcheckLiveAsksHealthz(t *testing.T) {
	var healthz atomic.Int32
	healthz.Store(http.StatusOK)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz":
			w.WriteHeader(int(healthz.Load()))
		case "/readyz":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			t.Errorf("asked %s", r.URL.Path)
		}
	}))
	defer hs.Close()
	env := addrEnv(strings.TrimPrefix(hs.URL, "http://"))
	if code, out, errb := runAll(t.Context(), env, "", "healthcheck", "--live"); code != 0 {
		t.Errorf("--live with /healthz 200 and /readyz 503: exit %d, stdout %q, stderr %q; want 0", code, out, errb)
	}
	healthz.Store(http.StatusInternalServerError)
	if code, _, errb := runAll(t.Context(), env, "", "healthcheck", "--live"); code != app.ExitError || !strings.Contains(errb, "not serving") || !strings.Contains(errb, "/healthz") {
		t.Errorf("--live with /healthz 500: exit %d, stderr %q; want %d, naming /healthz", code, errb, app.ExitError)
	}
	if code, _, errb := runAll(t.Context(), env, "", "healthcheck", "--live", "--url", hs.URL+"/healthz"); code != app.ExitUsage {
		t.Errorf("--live with --url: exit %d, stderr %q; want %d", code, errb, app.ExitUsage)
	}
	if got, err := app.LiveURL("0.0.0.0:8080"); err != nil || got != "http://127.0.0.1:8080/healthz" {
		t.Errorf("liveURL(0.0.0.0:8080) = %q, %v", got, err)
	}
}

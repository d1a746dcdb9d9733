package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// TestAWaitAnswersNothingToARemovedToken: a wait parked before a reload
// removed its token answers, when the question closes, 403 with nothing
// of the answer, whether the wait was taken over from net/http or parked
// in its handler; before, the removed token still got the person's
// answer (README: "a removed token stops working").
func TestAWaitAnswersNothingToARemovedToken(t *testing.T) {
	e := newEnv(t)
	srv, tookOver := takingServer(t, e)
	plain := inHandler(t, e)
	id := e.ask(agentA, "run-1")
	taken := startWait(t, srv, id, "timeout=1m")
	await(t, e, tookOver, "the take-over of the wait")
	handler := startWait(t, plain, id, "timeout=1m")
	e.parked(id)
	e.parked(id)

	if err := e.api.Reconfigure([]httpapi.Token{operator, admin, observer}, nil); err != nil {
		t.Fatal(err)
	}
	const secret = "the vault's combination is 1234"
	if _, err := e.as(operator).Answer(e.ctx(), id, client.AnswerRequest{Answer: secret}); err != nil {
		t.Fatal(err)
	}
	for what, c := range map[string]waitReply{"taken": readReply(t, e, taken), "in its handler": readReply(t, e, handler)} {
		if c.status != http.StatusForbidden || strings.Contains(string(c.body), "1234") || !strings.Contains(string(c.body), "no longer holds") {
			t.Errorf("the wait %s, its token removed: %d %s", what, c.status, c.body)
		}
	}
	if q, err := e.as(operator).Get(e.ctx(), id); err != nil || q.State != core.StateAnswered {
		t.Fatalf("the question: %+v, %v", q, err)
	}
}

// TestAWaitAfterDrainClosesItsConnection: a wait that comes in once the
// server drains is answered at once, with Connection: close, so the
// client's next wait goes to another replica rather than polling this
// one on the same connection until it stops.
func TestAWaitAfterDrainClosesItsConnection(t *testing.T) {
	e := newEnv(t)
	plain := inHandler(t, e)
	id := e.ask(agentA, "run-1")
	e.api.Drain()
	req, err := http.NewRequestWithContext(e.ctx(), http.MethodGet, plain.URL+"/v1/questions/"+string(id)+"/wait?timeout=30s", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+agentA.Secret)
	resp, err := plain.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !resp.Close {
		t.Fatalf("a wait after Drain: %d, Connection: close %v", resp.StatusCode, resp.Close)
	}
}

// TestAWrongMethodOnAMountedRouteIs405: a route mounted under /v1 with
// Handle (the hook door's POST) answers another method 405 with Allow,
// as the API's own routes do, even with a handler mounted at "/" (the
// console, in production); before, that handler's match made it a 404.
func TestAWrongMethodOnAMountedRouteIs405(t *testing.T) {
	e := newEnv(t)
	e.api.Handle("/", http.NotFoundHandler())
	e.api.Handle("POST /v1/hooks/{host}", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	if r := e.do(http.MethodGet, "/v1/hooks/claude-code", &agentA, ""); r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "POST" {
		t.Fatalf("GET on the mounted POST route: %d, Allow %q", r.status, r.header.Get("Allow"))
	}
}

// TestNoRouteRunsNoMountedHandler: finding 404 or 405 never serves a
// mounted route, even where the request matches it yet another pattern
// wins (one naming a host takes precedence over any without) and that
// pattern is not under /v1. Before, the probe for a 405 ran the mounted
// route itself (the hook door would have asked its question) and then
// answered 404.
func TestNoRouteRunsNoMountedHandler(t *testing.T) {
	e := newEnv(t)
	var ran atomic.Bool
	e.api.Handle("example.com/", http.NotFoundHandler())
	e.api.Handle("POST /v1/hooks/{host}", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran.Store(true) }))
	r := httptest.NewRequest(http.MethodPost, "http://example.com/v1/hooks/claude-code", nil)
	r.Header.Set("Authorization", "Bearer "+agentA.Secret)
	w := httptest.NewRecorder()
	e.api.ServeHTTP(w, r)
	if ran.Load() || w.Code != http.StatusNotFound {
		t.Fatalf("the mounted route ran: %v; status %d, want 404", ran.Load(), w.Code)
	}
}

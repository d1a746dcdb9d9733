package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/adapters/httpapi"
)

// TestRepeatedQueryParamIsRefused: a parameter that takes one value and
// is given twice is refused naming it, as a body's key given twice is.
// Before, the first value won and the rest were dropped without a word:
// an admin's end of ?agent=agent-b&agent=agent-c ended agent-b's run
// alone, a wait of ?timeout=0s&timeout=5m answered at once. Digest's
// role, which is repeatable, still takes several.
func TestRepeatedQueryParamIsRefused(t *testing.T) {
	e := newEnv(t)
	id := string(e.ask(agentA, "run-q"))
	e.ask(agentB, "run-q")
	for _, c := range []struct {
		method, path, param string
		tok                 *httpapi.Token
	}{
		{"POST", "/v1/runs/run-q/end?agent=agent-b&agent=agent-a", "agent", &admin},
		{"POST", "/v1/runs/run-q/end?agent=agent-a&agent=agent-b", "agent", &agentA},
		{"GET", "/v1/questions/" + id + "/wait?timeout=0s&timeout=5m", "timeout", &agentA},
		{"GET", "/v1/events?follow=false&since=0&since=5", "since", &operator},
		{"GET", "/v1/questions?limit=2&limit=900", "limit", &operator},
		{"GET", "/v1/digest?since=2026-01-02T00:00:00Z&since=2027-01-01T00:00:00Z", "since", &operator},
		{"GET", "/v1/directive?autonomy=full&autonomy=locked", "autonomy", &agentA},
	} {
		before := snapshot(t, e.store)
		r := e.do(c.method, c.path, c.tok, "")
		if r.status != http.StatusBadRequest || !strings.Contains(errorOf(t, r).Message, `"`+c.param+`"`) {
			t.Errorf("%s %s: %d %s; want a 400 naming %s", c.method, c.path, r.status, r.body, c.param)
		}
		if d := cmp.Diff(before, snapshot(t, e.store)); d != "" {
			t.Errorf("%s %s changed the store (-before +after):\n%s", c.method, c.path, d)
		}
	}
	if r := e.do("GET", "/v1/digest?since=2026-01-02T00:00:00Z&decider=slack:U1&role=a&role=b", &operator, ""); r.status != http.StatusOK {
		t.Errorf("digest with role twice: %d %s; want 200", r.status, r.body)
	}
}

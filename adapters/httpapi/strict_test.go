package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// stores opens each store the API runs on, fresh per test.
var stores = coretest.Stores

// snapshot is what a refused request must leave as it was: the open
// questions and the whole event log.
func snapshot(t *testing.T, st core.Store) any {
	t.Helper()
	ctx := context.Background()
	open, _, err := st.ListOpen(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Events(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return struct {
		Open   []*core.Question
		Events []core.Event
	}{open, evs}
}

// TestStrictBodies holds every request body to what its sender wrote:
// bytes that are not UTF-8, a key given twice and a key that matches a
// field only case-insensitively are each refused by name, and the store is
// left exactly as it was.
func TestStrictBodies(t *testing.T) {
	const ask = `"kind":"clarification","reversibility":"reversible","run_id":"r"`
	cases := []struct {
		name, body, want string
		answer           bool
	}{
		{"bad UTF-8 in the question", "{" + ask + ",\"question\":\"Q\xff\xfe?\"}", `not valid UTF-8 in field "question"`, false},
		{"bad UTF-8 in a key", "{" + ask + ",\"question\":\"Q?\",\"q\xffx\":1}", "not valid UTF-8", false},
		{"bad UTF-8 deep in a form", "{" + ask + `,"question":"Q?","labels":{"project":"b` + "\xc3" + `"}}`, `not valid UTF-8 in field "labels.project"`, false},
		{"bad UTF-8 in approval arguments", `{"kind":"approval","reversibility":"reversible","run_id":"r","question":"Q?","tool":"t","arguments":{"path":"/tmp/` + "\xed\xa0\x80" + `"}}`, `not valid UTF-8 in field "arguments.path"`, false},
		{"a key twice", "{" + ask + `,"question":"first","question":"second"}`, `duplicate key "question"`, false},
		{"a key twice in the arguments", `{"kind":"approval","reversibility":"reversible","run_id":"r","question":"Q?","tool":"t","arguments":{"a":1,"a":2}}`, `duplicate key "a" in field "arguments"`, false},
		{"a key that differs only in case", "{" + ask + `,"question":"q?","Question":"other"}`, `unknown field "Question"`, false},
		{"a field in the wrong case alone", `{"Kind":"clarification","reversibility":"reversible","run_id":"r","question":"q?"}`, `unknown field "Kind"`, false},
		{"bad UTF-8 in an answer", "{\"answer\":\"eu-\xff\xfe-west\"}", `not valid UTF-8 in field "answer"`, true},
		{"an answer key twice", `{"answer":"a","answer":"b"}`, `duplicate key "answer"`, true},
		{"an answer key in the wrong case", `{"Answer":"a"}`, `unknown field "Answer"`, true},
		// Unknown fields are named by their path in the body: "bogus"
		// alone does not say which of a dozen objects holds it.
		{"an unknown field in an option", "{" + ask + `,"question":"Q?","options":[{"id":"a","bogus":1}]}`, `unknown field "options.0.bogus"`, false},
		{"an unknown field in the labels", "{" + ask + `,"question":"Q?","labels":{"project":"p","team":"t"}}`, `unknown field "labels.team"`, false},
		{"an unknown field in an answered item", `{"items":[{"item_id":"x","bogus":1}]}`, `unknown field "items.0.bogus"`, true},
		// A whole number written as a fraction or an exponent (Python's
		// json.dumps of 2.0 is "2.0") is refused saying what is wanted,
		// not strconv's "invalid syntax".
		{"a fraction for a whole number", "{" + ask + `,"question":"Q?","max_reasks":2.0}`, `field "max_reasks" must be a whole number`, false},
		{"a whole number too large", "{" + ask + `,"question":"Q?","quorum":99999999999999999999}`, `field "quorum" is a whole number too large`, false},
		// A number would read as nanoseconds: 1800 meant seconds, and the
		// question timed out at the next tick, its cards sent for nothing.
		// The refusal is the duration's own, not that 1800 must be whole.
		{"a timeout as a number", "{" + ask + `,"question":"Q?","timeout":1800}`, `field "timeout": a duration is text`, false},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			e := newEnvOn(t, open(t))
			id := e.ask(agentA, "run-1")
			for _, c := range cases {
				before := snapshot(t, e.store)
				path, tok := "/v1/questions", &agentA
				if c.answer {
					path, tok = "/v1/questions/"+string(id)+"/answer", &operator
				}
				r := e.do("POST", path, tok, c.body)
				if r.status != 400 || !strings.Contains(errorOf(t, r).Message, c.want) {
					t.Errorf("%s: %d %s, want a 400 saying %s", c.name, r.status, r.body, c.want)
				}
				if d := cmp.Diff(before, snapshot(t, e.store)); d != "" {
					t.Errorf("%s: the refusal changed the store (-before +after):\n%s", c.name, d)
				}
			}
			// The same bodies, written correctly, are taken: the refusals
			// above were about the rules, not the content.
			r := e.do("POST", "/v1/questions", &agentA, "{"+ask+`,"question":"Q\u00ff?"}`)
			if r.status != 201 {
				t.Errorf("a valid escaped body: %d %s", r.status, r.body)
			}
			r = e.do("POST", "/v1/questions/"+string(id)+"/answer", &operator, `{"answer":"eu-west"}`)
			if r.status != 200 {
				t.Errorf("a valid answer: %d %s", r.status, r.body)
			}
		})
	}
}

// TestOutsideV1SpeaksJSON: the probes and paths nothing serves answer in
// the documented error shape too, with the mux's 404 or 405 and Allow.
func TestOutsideV1SpeaksJSON(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{"POST", "/healthz", 405, "GET, HEAD"},
		{"DELETE", "/readyz", 405, "GET, HEAD"},
		{"GET", "/nothing-here", 404, ""},
		{"GET", "/", 404, ""},
	} {
		r := e.do(c.method, c.path, nil, "")
		if r.status != c.status || errorOf(t, r).Code == "" || r.header.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d Allow=%q %s, want %d Allow=%q", c.method, c.path, r.status, r.header.Get("Allow"), r.body, c.status, c.allow)
		}
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s %s: content type %q", c.method, c.path, ct)
		}
	}
	// With a page mounted at "/" (as the console is), a probe's wrong
	// method is still the API's 405, not the page's 404.
	e.api.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>not here</html>", http.StatusNotFound)
	}))
	for _, c := range [][2]string{{"POST", "/healthz"}, {"DELETE", "/readyz"}, {"PUT", "/healthz"}} {
		r := e.do(c[0], c[1], nil, "")
		if r.status != http.StatusMethodNotAllowed || errorOf(t, r).Code != core.CodeInvalid || r.header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s %s beside a page at /: %d Allow=%q %s", c[0], c[1], r.status, r.header.Get("Allow"), r.body)
		}
	}
	if r := e.do("GET", "/healthz", nil, ""); r.status != http.StatusOK {
		t.Errorf("GET /healthz beside a page at /: %d", r.status)
	}
}

// TestReadyzOnAStalledRedis: a Redis that takes commands but answers none
// reads as not ready at the probe's own bound, not at the client's read
// timeout and retries. The pause outlasts the bound, so a probe that
// waited for Redis would log no "no answer within".
func TestReadyzOnAStalledRedis(t *testing.T) {
	srv := redistest.Start(t)
	st, err := redisstore.Open(context.Background(), srv.URL(), redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e := newEnvOn(t, st)
	if r := e.do("GET", "/readyz", nil, ""); r.status != 200 {
		t.Fatalf("readyz before the stall: %d %s", r.status, r.body)
	}
	if _, err := srv.Do("CLIENT", "PAUSE", "4000", "ALL"); err != nil {
		t.Fatal(err)
	}
	r := e.do("GET", "/readyz", nil, "")
	if r.status != 503 || errorOf(t, r).Code != "internal" {
		t.Errorf("readyz on a stalled Redis: %d %s", r.status, r.body)
	}
	if !strings.Contains(e.logs.String(), "no answer within") {
		t.Errorf("the probe did not give up at its bound; log:\n%s", e.logs.String())
	}
}

// TestAskIsIdempotent: a repeated ask (same run and tool call id, or the
// same Idempotency-Key) gets 200 and the question already parked; another
// body under the same key is a 409 that says so; nothing is parked twice.
func TestAskIsIdempotent(t *testing.T) {
	e := newEnv(t)
	body := `{"kind":"clarification","question":"Which region?","reversibility":"reversible","run_id":"r1","tool_call_id":"toolu_idem"}`
	first := e.do("POST", "/v1/questions", &agentA, body)
	again := e.do("POST", "/v1/questions", &agentA, body)
	var q1, q2 core.Question
	if first.status != 201 || json.Unmarshal(first.body, &q1) != nil {
		t.Fatalf("first ask: %d %s", first.status, first.body)
	}
	if again.status != 200 || json.Unmarshal(again.body, &q2) != nil || q2.ID != q1.ID {
		t.Fatalf("repeat: %d %s, want 200 with %s", again.status, again.body, q1.ID)
	}
	if again.header.Get("Location") != first.header.Get("Location") {
		t.Errorf("Location %q, want %q", again.header.Get("Location"), first.header.Get("Location"))
	}
	before := snapshot(t, e.store)
	other := strings.Replace(body, "Which region?", "Which zone?", 1)
	r := e.do("POST", "/v1/questions", &agentA, other)
	if r.status != 409 || !strings.Contains(errorOf(t, r).Message, string(q1.ID)) {
		t.Errorf("another body, same tool call: %d %s", r.status, r.body)
	}
	if d := cmp.Diff(before, snapshot(t, e.store)); d != "" {
		t.Errorf("the refused repeat changed the store:\n%s", d)
	}

	keyed := `{"kind":"clarification","question":"Ship it?","reversibility":"reversible","run_id":"r1"}`
	k1 := e.do("POST", "/v1/questions", &agentA, keyed, "Idempotency-Key", "deploy-42")
	k2 := e.do("POST", "/v1/questions", &agentA, keyed, "Idempotency-Key", "deploy-42")
	if k1.status != 201 || k2.status != 200 || !bytes.Equal(k1.body, k2.body) {
		t.Errorf("keyed asks: %d then %d\n%s\n%s", k1.status, k2.status, k1.body, k2.body)
	}
	r = e.do("POST", "/v1/questions", &agentA, strings.Replace(keyed, "Ship it?", "Roll back?", 1), "Idempotency-Key", "deploy-42")
	if r.status != 409 || !strings.Contains(errorOf(t, r).Message, "Idempotency-Key") {
		t.Errorf("another body under the key: %d %s", r.status, r.body)
	}
	// An ask naming its tool call is that call's one question, whatever
	// key each attempt carries (a library that keys every request, a
	// retry after a restart); before, the key won, and a second key
	// parked the same tool call again.
	call := `{"kind":"clarification","question":"Which bucket?","reversibility":"reversible","run_id":"r1","tool_call_id":"toolu_keyed"}`
	c1 := e.do("POST", "/v1/questions", &agentA, call, "Idempotency-Key", "attempt-a")
	c2 := e.do("POST", "/v1/questions", &agentA, call, "Idempotency-Key", "attempt-b")
	if c1.status != 201 || c2.status != 200 || !bytes.Equal(c1.body, c2.body) {
		t.Errorf("one tool call under two keys: %d then %d\n%s\n%s", c1.status, c2.status, c1.body, c2.body)
	}
	// Another body for that tool call is refused naming the tool call,
	// whatever key it carries: a new key would not help.
	r = e.do("POST", "/v1/questions", &agentA, strings.Replace(call, "Which bucket?", "Which zone?", 1), "Idempotency-Key", "attempt-c")
	if r.status != 409 || !strings.Contains(errorOf(t, r).Message, "tool call id toolu_keyed") {
		t.Errorf("another body for the tool call, under a key: %d %s", r.status, r.body)
	}
	// The key is the agent's own: another agent's same key parks anew.
	if r := e.do("POST", "/v1/questions", &agentB, keyed, "Idempotency-Key", "deploy-42"); r.status != 201 {
		t.Errorf("another agent's key: %d %s", r.status, r.body)
	}
}

// lossyProxy stands in front of the API and loses the response to the
// first ask it forwards (the first lose, when set): the ask is stored,
// the agent gets a 502, as when a replica dies between storing and
// answering.
type lossyProxy struct {
	h    http.Handler
	lost atomic.Int32
	lose int32
}

func (p *lossyProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == "POST" && r.URL.Path == "/v1/questions" && p.lost.Add(1) <= max(p.lose, 1) {
		p.h.ServeHTTP(httptest.NewRecorder(), r)
		http.Error(w, "bad gateway", http.StatusBadGateway)
		return
	}
	p.h.ServeHTTP(w, r)
}

// TestClientRetriesAskSafely: the Go client sends an ask again after a
// lost response, and the retry gets the question the first attempt
// stored, with a tool call id and without one (the client then makes its
// own Idempotency-Key).
func TestClientRetriesAskSafely(t *testing.T) {
	for name, req := range map[string]client.AskRequest{
		"tool call id": clarification("run-1"),
		"neither":      {Kind: core.KindClarification, Question: "Proceed?", Reversibility: core.Reversible, RunID: "run-1"},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			p := &lossyProxy{h: e.api}
			srv := httptest.NewServer(p)
			t.Cleanup(srv.Close)
			c := client.New(srv.URL, agentA.Secret)
			q, err := c.Ask(e.ctx(), req)
			if err != nil {
				t.Fatal(err)
			}
			if p.lost.Load() < 2 {
				t.Fatalf("the client did not retry (%d asks reached the proxy)", p.lost.Load())
			}
			open, _, err := e.store.ListOpen(e.ctx(), "", 0)
			if err != nil || len(open) != 1 || open[0].ID != q.ID {
				t.Fatalf("open questions %d (%v), want exactly the one returned, %s", len(open), err, q.ID)
			}
		})
	}
	// A refusal is not retried: it would fail the same way.
	e := newEnv(t)
	p := &lossyProxy{h: e.api}
	p.lost.Store(1) // lose nothing
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	if _, err := client.New(srv.URL, agentA.Secret).Ask(e.ctx(), client.AskRequest{Kind: "riddle"}); err == nil {
		t.Fatal("a bad ask was taken")
	}
	if n := p.lost.Load(); n != 2 {
		t.Errorf("a 400 was sent %d times, want once", n-1)
	}
}

// TestClientAskKeySurvivesGivingUp: an ask the client gives up on, not
// knowing whether it was parked, returns its Idempotency-Key, and asking
// again with it gets the one question; before, the key was lost, and the
// caller's retry parked a second question people were asked twice.
func TestClientAskKeySurvivesGivingUp(t *testing.T) {
	e := newEnv(t)
	p := &lossyProxy{h: e.api, lose: 2}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, agentA.Secret)
	req := client.AskRequest{Kind: core.KindClarification, Question: "Proceed?", Reversibility: core.Reversible, RunID: "run-1"}
	ctx, cancel := context.WithTimeout(e.ctx(), 400*time.Millisecond)
	defer cancel()
	_, err := c.Ask(ctx, req)
	var ae *client.AskError
	if !errors.As(err, &ae) || ae.Key == "" {
		t.Fatalf("the ask given up on: %v, want an *AskError with its key", err)
	}
	req.IdempotencyKey = ae.Key
	q, err := c.Ask(e.ctx(), req)
	if err != nil {
		t.Fatal(err)
	}
	open, _, err := e.store.ListOpen(e.ctx(), "", 0)
	if err != nil || len(open) != 1 || open[0].ID != q.ID {
		t.Fatalf("open questions %d (%v), want exactly the one returned, %s", len(open), err, q.ID)
	}
}

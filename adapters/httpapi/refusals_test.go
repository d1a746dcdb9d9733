package httpapi_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/core"
)

// TestABodyThatCannotBeReadLeaksNothing: a body that stops coming (the
// program gives a body a minute, then its read fails) is a 400 in the
// API's words. Before, the message quoted net/http's read error, which
// names the server's own address and port and the peer's as the server
// sees it ("read tcp 10.0.0.5:8080->...: i/o timeout").
func TestABodyThatCannotBeReadLeaksNothing(t *testing.T) {
	e := newEnv(t)
	// The program's body deadline, already passed: the read of the rest
	// of the body fails at once, as a stalled client's does after it.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
		e.api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	before := snapshot(t, e.store)
	conn, br := dialRaw(t, e, srv)
	fmt.Fprintf(conn, "POST /v1/questions HTTP/1.1\r\nHost: askbridge\r\nAuthorization: Bearer %s\r\nContent-Length: 200\r\n\r\n{\"kind\"", agentA.Secret)
	status, body := readResponse(t, br)
	if status != http.StatusBadRequest || !strings.Contains(body, `"code":"invalid"`) || !strings.Contains(body, "request body") {
		t.Fatalf("a body cut short: %d %s, want a 400 about the request body", status, body)
	}
	host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	for _, internal := range []string{host, ":" + port, "tcp", "i/o timeout"} {
		if strings.Contains(body, internal) {
			t.Errorf("the refusal quotes %q: %s", internal, body)
		}
	}
	if d := cmp.Diff(before, snapshot(t, e.store)); d != "" {
		t.Errorf("the refusal changed the store:\n%s", d)
	}
}

// TestMalformedQueriesAreRefused: a query string that does not parse (a
// bad %-escape, a ';' between parameters) is a 400 naming the parameter,
// on every route. Before, net/http dropped the pair that did not parse
// and the route went on without it: an events stream asked for since=%zz
// sent the whole log from the start, a limit=%zz listed the default page,
// a wait's second timeout hid the first's mistake.
func TestMalformedQueriesAreRefused(t *testing.T) {
	e := newEnv(t)
	id := e.ask(agentA, "run-1")
	before := snapshot(t, e.store)
	for _, c := range []struct {
		method, path, param string
		agent               bool
	}{
		{"GET", "/v1/events?follow=false&since=%zz", "since", false},
		{"GET", "/v1/questions?state=open&limit=%zz", "limit", false},
		{"GET", "/v1/questions?state=open;limit=5", "state", false},
		{"GET", "/v1/digest?since=2026-01-01T00:00:00Z&until=2026-01-0%", "until", false},
		{"GET", "/v1/questions/" + string(id) + "/wait?timeout=0s&timeout=%zz", "timeout", true},
		{"POST", "/v1/runs/run-1/end?agent=%zz", "agent", true},
	} {
		tok := &operator
		if c.agent {
			tok = &agentA
		}
		r := e.do(c.method, c.path, tok, "")
		if r.status != http.StatusBadRequest || errorOf(t, r).Code != core.CodeInvalid || !strings.Contains(errorOf(t, r).Message, `"`+c.param+`"`) {
			t.Errorf("%s %s: %d %s, want a 400 naming %q", c.method, c.path, r.status, r.body, c.param)
		}
	}
	if d := cmp.Diff(before, snapshot(t, e.store)); d != "" {
		t.Errorf("the refusals changed the store:\n%s", d)
	}
	// A query that parses is taken as before, escapes (of a ; too) and all.
	if r := e.do("GET", "/v1/directive?autonomy=semi&department=d%C3%A4ta%3B+team&role=o%3Bps", &agentA, ""); r.status != http.StatusOK {
		t.Errorf("a well-escaped query: %d %s", r.status, r.body)
	}
}

// TestUnknownQueryParametersAreRefused: a query parameter a route does not
// read is refused naming it and the ones the route takes, as an unknown
// body field is; ignored, ?status=closed listed the open questions as if
// they were the closed ones asked for.
func TestUnknownQueryParametersAreRefused(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ path, param, takes string }{
		{"/v1/questions?status=closed", "status", "state, limit, cursor"},
		{"/v1/questions?limit=5&curser=x", "curser", "state, limit, cursor"},
		{"/v1/people?verbose=1", "verbose", "takes none"},
	} {
		r := e.do("GET", c.path, &operator, "")
		if r.status != http.StatusBadRequest || !strings.Contains(errorOf(t, r).Message, `"`+c.param+`"`) || !strings.Contains(errorOf(t, r).Message, c.takes) {
			t.Errorf("GET %s: %d %s, want a 400 naming %q and %q", c.path, r.status, r.body, c.param, c.takes)
		}
	}
	if r := e.do("GET", "/v1/questions?state=open&limit=5", &operator, ""); r.status != http.StatusOK {
		t.Errorf("the parameters the route takes: %d %s", r.status, r.body)
	}
}

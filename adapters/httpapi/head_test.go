package httpapi_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/core"
)

// head sends a HEAD for path as tok on a connection of its own, asking
// the server to close it after the response, and returns the response and
// whether the server then ended it; a nil response if none came. A response whose handler goes on (an
// events stream following the log, a wait parked on its question) keeps
// the connection open: HEAD's headers arrive at once either way, so only
// the connection's end tells a handler that answered from one that did
// not. The read's deadline is the test's guard against a hang, not a
// timing assertion.
func (e *env) head(path string, tok *httpapi.Token) (*http.Response, bool) {
	e.t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close()
	deadline, _ := e.ctx().Deadline()
	_ = conn.SetDeadline(deadline)
	req, err := http.NewRequest(http.MethodHead, e.srv.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Close = true
	req.Header.Set("Authorization", "Bearer "+tok.Secret)
	if err := req.Write(conn); err != nil {
		e.t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		e.t.Errorf("HEAD %s: no response: %v", path, err)
		return nil, false
	}
	rest, err := io.ReadAll(br)
	if len(rest) > 0 {
		e.t.Errorf("HEAD %s: %d bytes after the headers: %q", path, len(rest), rest)
	}
	return resp, err == nil // EOF: the server closed it; a timeout: it did not
}

// TestHeadAnswersAtOnce: HEAD is GET without the body on every route, and
// on the two that would hold the response open (an events stream that
// follows the log, a wait on an open question) it answers at once with
// the headers GET would start with. Before, HEAD /v1/events followed the
// log until the client hung up and a HEAD on a wait parked for its whole
// timeout, each holding a handler for nothing anyone could read.
func TestHeadAnswersAtOnce(t *testing.T) {
	e := newEnv(t)
	id := string(e.ask(agentA, "run-head"))
	wait := "/v1/questions/" + id + "/wait?timeout=" + (time.Minute).String()

	for _, path := range []string{"/v1/events", "/v1/events?follow=true"} {
		resp, ended := e.head(path, &operator)
		if resp == nil {
			continue
		}
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Errorf("HEAD %s: %d %v, want 200 with the stream's headers", path, resp.StatusCode, resp.Header)
		}
		if !ended {
			t.Errorf("HEAD %s: the response did not end: it follows the log", path)
		}
	}

	resp, ended := e.head(wait, &agentA)
	switch {
	case resp == nil:
		// no headers before the test's guard: it parked on the question
	case resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json"):
		t.Errorf("HEAD on a wait: %d %v, want 200 with JSON's headers", resp.StatusCode, resp.Header)
	case !ended:
		t.Errorf("HEAD on a wait: the response did not end: it parked on the question")
	}
	// The checks GET makes still hold: another agent's question is
	// unknown, a bad timeout is refused, and events are not an agent's.
	for _, c := range []struct {
		path   string
		tok    *httpapi.Token
		status int
	}{
		{wait, &agentB, http.StatusNotFound},
		{"/v1/questions/" + id + "/wait?timeout=soon", &agentA, http.StatusBadRequest},
		{"/v1/events", &agentA, http.StatusForbidden},
		{"/v1/events?since=x", &operator, http.StatusBadRequest},
	} {
		if resp, ended := e.head(c.path, c.tok); resp != nil && (resp.StatusCode != c.status || !ended) {
			t.Errorf("HEAD %s as %s: %d (ended %v), want %d", c.path, c.tok.Name, resp.StatusCode, ended, c.status)
		}
	}
	// And HEAD changed nothing: the question is still open.
	if q, err := e.svc.Get(e.ctx(), core.QuestionID(id)); err != nil || !q.Open() {
		t.Errorf("the question after the HEADs: %+v, %v; want it open", q, err)
	}
}

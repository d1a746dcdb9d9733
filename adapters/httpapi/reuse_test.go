package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
)

// reusingServer serves e's API through its Listener, as the program does,
// and tells of each connection taken over by a wait.
func reusingServer(t *testing.T, e *env) (*httptest.Server, <-chan struct{}) {
	return takingServer(t, e, e.api.Listener)
}

// TestTakenWaitKeepsItsConnection: served through Listener, a parked
// wait's answer keeps the connection alive, and the client's next request
// goes over the same connection.
func TestTakenWaitKeepsItsConnection(t *testing.T) {
	e := newEnv(t)
	srv, tookOver := reusingServer(t, e)
	id := e.ask(agentA, "run-1")
	hc := srv.Client()
	get := func(path string) (*http.Response, string, bool) {
		t.Helper()
		reused := false
		trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) { reused = ci.Reused }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(e.ctx(), trace), http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+agentA.Secret)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body), reused
	}
	done := make(chan string, 1)
	go func() {
		resp, body, _ := get("/v1/questions/" + string(id) + "/wait?timeout=1m")
		if resp.Close || resp.Header.Get("Connection") != "" {
			t.Errorf("the wait's answer closes its connection: %v", resp.Header)
		}
		done <- body
	}()
	await(t, e, tookOver, "the take-over of the wait")
	if _, err := e.as(operator).Answer(e.ctx(), id, client.AnswerRequest{Answer: "Postgres"}); err != nil {
		t.Fatal(err)
	}
	if body := await(t, e, done, "the wait's answer"); !strings.Contains(body, `"state":"answered"`) {
		t.Fatalf("wait: %s", body)
	}
	resp, body, reused := get("/v1/questions/" + string(id))
	if resp.StatusCode != 200 || !strings.Contains(body, `"state":"answered"`) || !reused {
		t.Fatalf("the request after the wait: %d, on the same connection %v\n%s", resp.StatusCode, reused, body)
	}
}

// TestRequestsBehindAKeptWait: requests sent behind a wait, in the same
// write or while it is parked, are answered after it on the same
// connection, once it goes back to the server.
func TestRequestsBehindAKeptWait(t *testing.T) {
	e := newEnv(t)
	srv, tookOver := reusingServer(t, e)
	id := e.ask(agentA, "run-1")
	c := startWait(t, srv, id, "timeout=1m", healthz)
	if deadline, ok := e.ctx().Deadline(); ok {
		_ = c.SetReadDeadline(deadline) // a guard against a hang, not a timing assertion
	}
	await(t, e, tookOver, "the take-over of the wait")
	fmt.Fprintf(c, "GET /readyz HTTP/1.1\r\nHost: askbridge\r\n\r\n") // while the wait is parked
	if _, err := e.as(operator).Answer(e.ctx(), id, client.AnswerRequest{Answer: "Postgres"}); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	for _, want := range []string{`"state":"answered"`, `"status":"ok"`, `"status":"ready"`} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("reading the answer with %s: %v", want, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) || resp.Close {
			t.Fatalf("want %s: %d %s (Connection: close %v)", want, resp.StatusCode, body, resp.Close)
		}
	}
}

// TestDrainClosesKeptWaits: once Drain begins, a parked wait's answer
// closes its connection even when served through Listener, so a stopping
// server keeps nothing alive.
func TestDrainClosesKeptWaits(t *testing.T) {
	e := newEnv(t)
	srv, tookOver := reusingServer(t, e)
	id := e.ask(agentA, "run-1")
	c := startWait(t, srv, id, "timeout=1m")
	await(t, e, tookOver, "the take-over of the wait")
	e.api.Drain()
	if r := readReply(t, e, c); r.status != 200 || !strings.Contains(string(r.body), `"state":"open"`) || !r.close || !r.eof {
		t.Fatalf("drained wait: %d %s (Connection: close %v, closed %v)", r.status, r.body, r.close, r.eof)
	}
}

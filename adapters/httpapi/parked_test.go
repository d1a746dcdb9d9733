package httpapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// A wait parked on an HTTP/1.1 connection is taken over from net/http
// (the handler returns and a goroutine of the API's own answers later).
// These tests hold the taken wait to what the handler's own wait does.

// plainWriter hides every method of the writer it wraps but the three of
// http.ResponseWriter, so the API behind it cannot take the connection
// over and waits in its handler.
type plainWriter struct{ http.ResponseWriter }

// inHandler serves e's API through plainWriter, for the handler's own
// wait to compare with.
func inHandler(t *testing.T, e *env) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.api.ServeHTTP(plainWriter{w}, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// takingServer serves e's API as e.srv does, and tells of each connection
// the API takes over from net/http (StateHijacked), which it does once the
// wait is watched and read open: a close, a timeout or Drain from then on
// is the taken wait's to answer.
// through, if given, wraps the server's listener (Server.Listener).
func takingServer(t *testing.T, e *env, through ...func(net.Listener) net.Listener) (*httptest.Server, <-chan struct{}) {
	taken := make(chan struct{}, 16)
	srv := httptest.NewUnstartedServer(e.api)
	for _, wrap := range through {
		srv.Listener = wrap(srv.Listener)
	}
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateHijacked {
			taken <- struct{}{}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, taken
}

// await receives from ch, or fails the test with what did not happen.
func await[T any](t *testing.T, e *env, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-e.ctx().Done():
		t.Fatalf("%s did not happen", what)
	}
	var zero T
	return zero
}

// startWait sends a wait on id as agent-a over a raw connection to srv,
// which it returns unread; behind, if given, goes in the same write, so
// the requests arrive together (pipelined).
func startWait(t *testing.T, srv *httptest.Server, id core.QuestionID, query string, behind ...string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET /v1/questions/%s/wait?%s HTTP/1.1\r\nHost: askbridge\r\nAuthorization: Bearer %s\r\n\r\n%s", id, query, agentA.Secret, strings.Join(behind, ""))
	return c
}

// healthz is a request to send behind a wait.
const healthz = "GET /healthz HTTP/1.1\r\nHost: askbridge\r\n\r\n"

// waitReply is one wait's response as it came over the wire.
type waitReply struct {
	status int
	header http.Header
	body   []byte
	close  bool // the response said Connection: close
	eof    bool // and the server closed the connection after it
}

// readReply reads the response to a wait startWait sent and, if it says
// Connection: close, whether the server then closes the connection.
func readReply(t *testing.T, e *env, c net.Conn) waitReply {
	t.Helper()
	if deadline, ok := e.ctx().Deadline(); ok {
		_ = c.SetReadDeadline(deadline) // a guard against a hang, not a timing assertion
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := waitReply{status: resp.StatusCode, header: resp.Header, body: body, close: resp.Close}
	if r.close { // a connection kept alive would not end here
		rest, err := io.ReadAll(br)
		r.eof = err == nil && len(rest) == 0
	}
	return r
}

// sameReply fails unless the taken wait's response is the handler's own,
// byte for byte in the body and in the headers the API sets.
func sameReply(t *testing.T, what string, taken, handler waitReply) {
	t.Helper()
	if taken.status != handler.status || !bytes.Equal(taken.body, handler.body) {
		t.Errorf("%s: the taken wait answered %d\n%s\nthe handler's %d\n%s", what, taken.status, taken.body, handler.status, handler.body)
	}
	for _, h := range []string{"Content-Type", "X-Content-Type-Options", "Cache-Control"} {
		if got, want := taken.header.Values(h), handler.header.Values(h); strings.Join(got, ",") != strings.Join(want, ",") || len(want) != 1 {
			t.Errorf("%s: %s is %q on the taken wait, %q on the handler's", what, h, got, want)
		}
	}
	if taken.header.Get("Date") == "" || taken.header.Get("Content-Length") != fmt.Sprint(len(taken.body)) {
		t.Errorf("%s: the taken wait's Date %q, Content-Length %q for %d bytes", what, taken.header.Get("Date"), taken.header.Get("Content-Length"), len(taken.body))
	}
	if !taken.close || !taken.eof {
		t.Errorf("%s: the taken wait did not close its connection (Connection: close %v, closed %v)", what, taken.close, taken.eof)
	}
	if handler.close {
		t.Errorf("%s: the handler's wait closed its connection: it was taken over too", what)
	}
}

// TestTakenWaitAnswersAsTheHandler parks a taken wait and a handler's wait
// on the same question, and compares their responses when it closes, when
// the timeout passes and when the server drains; and their access log
// lines, one per request, with the status sent and the time waited.
func TestTakenWaitAnswersAsTheHandler(t *testing.T) {
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			e := newEnvOn(t, open(t))
			srv, tookOver := takingServer(t, e)
			plain := inHandler(t, e)
			both := func(id core.QuestionID, query string) (taken, handler net.Conn) {
				taken = startWait(t, srv, id, query)
				await(t, e, tookOver, "the take-over of the wait")
				handler = startWait(t, plain, id, query)
				e.parked(id) // the taken wait's watch
				e.parked(id) // the handler's
				return taken, handler
			}

			answered := e.ask(agentA, "run-1")
			taken, handler := both(answered, "timeout=1m")
			if _, err := e.as(operator).Answer(e.ctx(), answered, client.AnswerRequest{Answer: "Postgres <and> \"quotes\" & more"}); err != nil {
				t.Fatal(err)
			}
			closed := readReply(t, e, taken)
			sameReply(t, "answered", closed, readReply(t, e, handler))
			var w client.WaitResponse
			if err := json.Unmarshal(closed.body, &w); err != nil || w.State != core.StateAnswered || w.Resume == nil || w.Anthropic == nil {
				t.Fatalf("answered wait: %v %s", err, closed.body)
			}

			timedOut := e.ask(agentA, "run-1")
			taken, handler = both(timedOut, "timeout=50ms")
			open := readReply(t, e, taken)
			sameReply(t, "timed out", open, readReply(t, e, handler))
			w = client.WaitResponse{}
			if err := json.Unmarshal(open.body, &w); err != nil || w.State != core.StateOpen || w.Resume != nil {
				t.Fatalf("timed-out wait: %v %s", err, open.body)
			}

			drained := e.ask(agentA, "run-1")
			taken, handler = both(drained, "timeout=1m")
			e.api.Drain()
			open = readReply(t, e, taken)
			sameReply(t, "drained", open, readReply(t, e, handler))
			w = client.WaitResponse{}
			if err := json.Unmarshal(open.body, &w); err != nil || w.State != core.StateOpen || w.QuestionID != drained {
				t.Fatalf("drained wait: %v %s", err, open.body)
			}

			// Drain has returned, so every taken wait has logged.
			for _, c := range []struct {
				id      core.QuestionID
				atLeast time.Duration
			}{{answered, 0}, {timedOut, 50 * time.Millisecond}, {drained, 0}} {
				lines := accessLines(t, e, "/v1/questions/"+string(c.id)+"/wait")
				if len(lines) != 2 {
					t.Fatalf("%d access log lines for the waits on %s, want one per request:\n%s", len(lines), c.id, e.logs)
				}
				for _, l := range lines {
					// The response cannot have gone before the timeout passed.
					if l.Status != 200 || l.Token != agentA.Name || time.Duration(l.Duration*float64(time.Millisecond)) < c.atLeast {
						t.Errorf("access log line %+v for a wait on %s", l, c.id)
					}
				}
			}
		})
	}
}

// logLine is one line of the API's access log.
type logLine struct {
	Message  string  `json:"message"`
	Method   string  `json:"method"`
	Path     string  `json:"path"`
	Status   int     `json:"status"`
	Duration float64 `json:"duration"` // milliseconds
	Token    string  `json:"token"`
}

// accessLines returns the access log lines of requests for path.
func accessLines(t *testing.T, e *env, path string) []logLine {
	t.Helper()
	var out []logLine
	for _, raw := range strings.Split(strings.TrimSpace(e.logs.String()), "\n") {
		var l logLine
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatalf("log line %q: %v", raw, err)
		}
		if l.Message == "http request" && l.Path == path {
			out = append(out, l)
		}
	}
	return out
}

// TestTakenWaitFreedWhenClientLeaves: a client that hangs up frees its
// parked wait at once (the store's watch stops and Drain has nothing left
// to wait for), and the question is untouched.
func TestTakenWaitFreedWhenClientLeaves(t *testing.T) {
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			e := newEnvOn(t, open(t))
			srv, tookOver := takingServer(t, e)
			id := e.ask(agentA, "run-1")
			c := startWait(t, srv, id, "timeout=1m")
			await(t, e, tookOver, "the take-over of the wait")
			c.Close()
			if got := await(t, e, e.store.stopped, "the freeing of the wait whose client left"); got != id {
				t.Fatalf("the watch on %s stopped, want %s", got, id)
			}
			drained := make(chan struct{})
			go func() { e.api.Drain(); close(drained) }()
			await(t, e, drained, "Drain with no wait left")
			if lines := accessLines(t, e, "/v1/questions/"+string(id)+"/wait"); len(lines) != 1 {
				t.Errorf("%d access log lines for the wait, want 1", len(lines))
			}
			q, err := e.svc.Get(e.ctx(), id)
			if err != nil || !q.Open() {
				t.Fatalf("question after its waiter left: %+v, %v", q, err)
			}
		})
	}
}

// TestDrainAnswersTakenWaits: Drain returns only once every taken wait has
// answered 200 with the question still open and closed its connection, so
// http.Server.Shutdown, which does not see those connections, leaves none
// behind.
func TestDrainAnswersTakenWaits(t *testing.T) {
	e := newEnv(t)
	srv, tookOver := takingServer(t, e)
	var ids []core.QuestionID
	var conns []net.Conn
	for range 3 {
		id := e.ask(agentA, "run-1")
		conns = append(conns, startWait(t, srv, id, "timeout=1m"))
		await(t, e, tookOver, "the take-over of the wait")
		ids = append(ids, id)
	}
	e.api.Drain()
	for range ids {
		select {
		case <-e.store.stopped:
		default:
			t.Fatal("Drain returned before every taken wait had stopped watching")
		}
	}
	for i, c := range conns {
		r := readReply(t, e, c)
		var w client.WaitResponse
		if err := json.Unmarshal(r.body, &w); err != nil || r.status != 200 || w.State != core.StateOpen || w.QuestionID != ids[i] || !r.close || !r.eof {
			t.Errorf("drained wait on %s: %d %s (closed %v)", ids[i], r.status, r.body, r.eof)
		}
	}
	// A wait after Drain is answered at once, in its handler.
	r := e.do("GET", "/v1/questions/"+string(ids[0])+"/wait?timeout=1m", &agentA, "")
	if r.status != 200 || !strings.Contains(string(r.body), `"state":"open"`) {
		t.Fatalf("wait after Drain: %d %s", r.status, r.body)
	}
}

// TestTakenWaitThroughAFormsItems: a form's first item wakes the taken
// wait without closing the question, and the wait parks again until the
// last item closes it.
func TestTakenWaitThroughAFormsItems(t *testing.T) {
	e := newEnv(t)
	var items []core.FormItem
	var answers []client.ItemAnswer
	for _, id := range []string{"region", "size"} {
		items = append(items, core.FormItem{ID: id, Question: "Which " + id + "?", Options: []core.FormOption{{ID: "a", Label: "A"}, {ID: "b", Label: "B"}}})
		answers = append(answers, client.ItemAnswer{ItemID: id, OptionID: "a"})
	}
	fq, err := e.as(agentA).Ask(e.ctx(), client.AskRequest{Kind: core.KindForm, Question: "Deploy settings", Reversibility: core.Reversible, RunID: "run-1", Items: items})
	if err != nil {
		t.Fatal(err)
	}
	srv, tookOver := takingServer(t, e)
	c := startWait(t, srv, fq.ID, "timeout=1m")
	await(t, e, tookOver, "the take-over of the wait")
	for _, item := range answers {
		if _, err := e.as(operator).Answer(e.ctx(), fq.ID, client.AnswerRequest{Items: []client.ItemAnswer{item}}); err != nil {
			t.Fatal(err)
		}
	}
	r := readReply(t, e, c)
	var w client.WaitResponse
	if err := json.Unmarshal(r.body, &w); err != nil || w.State != core.StateAnswered || w.Resume == nil || len(w.Resume.Structured.Items) != 2 {
		t.Fatalf("wait on the form: %d %s", r.status, r.body)
	}
}

// TestWaitOverHTTP2WaitsInTheHandler: HTTP/2 cannot hand its connection
// over, so the handler waits, woken by the store as on HTTP/1.1.
func TestWaitOverHTTP2WaitsInTheHandler(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewUnstartedServer(e.api)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	id := e.ask(agentA, "run-1")

	type reply struct {
		proto string
		res   client.WaitResponse
		err   error
	}
	done := make(chan reply, 1)
	go func() {
		req, _ := http.NewRequestWithContext(e.ctx(), "GET", srv.URL+"/v1/questions/"+string(id)+"/wait?timeout=1m", nil)
		req.Header.Set("Authorization", "Bearer "+agentA.Secret)
		resp, err := srv.Client().Do(req)
		if err != nil {
			done <- reply{err: err}
			return
		}
		defer resp.Body.Close()
		var r reply
		r.proto, r.err = resp.Proto, json.NewDecoder(resp.Body).Decode(&r.res)
		done <- r
	}()
	e.parked(id)
	if _, err := e.as(operator).Answer(e.ctx(), id, client.AnswerRequest{Answer: "Postgres"}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err != nil || r.proto != "HTTP/2.0" || r.res.State != core.StateAnswered || r.res.Resume == nil {
			t.Fatalf("wait over HTTP/2: %s %+v, %v", r.proto, r.res, r.err)
		}
	case <-e.ctx().Done():
		t.Fatal("the wait over HTTP/2 did not return after the answer")
	}
}

// TestPipelinedRequestAfterATakenWait: a request pipelined behind a wait
// is not answered (the wait's response closes the connection, and HTTP/1.1
// has the client send it again); the wait itself is answered as usual.
func TestPipelinedRequestAfterATakenWait(t *testing.T) {
	e := newEnv(t)
	srv, tookOver := takingServer(t, e)
	id := e.ask(agentA, "run-1")
	c := startWait(t, srv, id, "timeout=1m", healthz)
	await(t, e, tookOver, "the take-over of the wait")
	if _, err := e.as(operator).Answer(e.ctx(), id, client.AnswerRequest{Answer: "Postgres"}); err != nil {
		t.Fatal(err)
	}
	r := readReply(t, e, c)
	if r.status != 200 || !strings.Contains(string(r.body), `"state":"answered"`) || !r.close || !r.eof {
		t.Fatalf("wait with a request pipelined behind it: %d %s (Connection: close %v, closed %v)", r.status, r.body, r.close, r.eof)
	}
}

// TestTakenWaitHoldsOneGoroutine: a taken wait keeps one goroutine, in the
// read of its connection, and none relaying its watch: the store calls it
// back on a change (core.Store.WatchFunc). A thousand parked waits are a
// thousand stacks for the collector to scan, not two thousand.
func TestTakenWaitHoldsOneGoroutine(t *testing.T) {
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			e := newEnvOn(t, open(t))
			srv, tookOver := takingServer(t, e)
			const waits = 12
			for range waits {
				startWait(t, srv, e.ask(agentA, "run-1"), "timeout=1m")
				await(t, e, tookOver, "the take-over of a wait")
			}
			// Until the count settles at one per wait: a take-over in its
			// last steps shows for a moment as one more.
			var parked, relays int
			for parked != waits && e.ctx().Err() == nil {
				runtime.Gosched()
				parked, relays = waitGoroutines()
			}
			if parked != waits || relays != 0 {
				t.Fatalf("%d goroutines in taken waits and %d relaying watches for %d waits; want one each, and none", parked, relays, waits)
			}
		})
	}
}

// waitGoroutines counts the goroutines in a taken wait's code and any
// started under core.Watcher.Notify (a relay of the watch's channel, as
// Notify once started where the store did not call back).
func waitGoroutines() (parked, relays int) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for _, g := range strings.Split(string(buf), "\n\n") {
		switch {
		case strings.Contains(g, "httpapi.(*parked)"):
			parked++
		case strings.Contains(g, "core.(*Watcher).Notify"):
			relays++
		}
	}
	return parked, relays
}

package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// TestAWaitWithABodyLeavesTheConnectionWhole: a wait sent with a request
// body (a GET whose client library sends one, or Go's empty chunked one)
// is not taken over, so net/http reads the body and the next request on
// the connection is read as sent. Before, the wait was taken over with
// its body unread, and once the connection went back to the server the
// body's bytes were read as the next request: a bare 400.
func TestAWaitWithABodyLeavesTheConnectionWhole(t *testing.T) {
	for _, c := range []struct{ name, head, body string }{
		{"content-length", "Content-Length: 2\r\n", "{}"},
		{"empty chunked", "Transfer-Encoding: chunked\r\n", "0\r\n\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			srv, _ := reusingServer(t, e)
			id := e.ask(agentA, "run-1")
			conn, br := dialRaw(t, e, srv)
			fmt.Fprintf(conn, "GET /v1/questions/%s/wait?timeout=1m HTTP/1.1\r\nHost: askbridge\r\nAuthorization: Bearer %s\r\n%s\r\n%s", id, agentA.Secret, c.head, c.body)
			answerParked(t, e, id)
			if status, b := readResponse(t, br); !strings.Contains(b, `"state":"answered"`) {
				t.Fatalf("wait: %d %s", status, b)
			}
			fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: askbridge\r\n\r\n")
			if status, b := readResponse(t, br); status != http.StatusOK {
				t.Errorf("the next request on the same connection got %d %q", status, b)
			}
		})
	}
}

// TestAWaitsBodyIsNoRequest: behind a proxy that shares one upstream
// connection among its clients (nginx with upstream keepalive, an
// ingress), a wait whose body is itself a request gets no second
// response: the next client on the connection reads its own. Before, the
// server answered the smuggled request once the wait answered, and the
// proxy handed that answer to the next client: agent-b read agent-a's
// question.
func TestAWaitsBodyIsNoRequest(t *testing.T) {
	e := newEnv(t)
	srv, _ := reusingServer(t, e)
	idA := e.ask(agentA, "run-1")
	idB := e.ask(agentB, "run-b")
	smuggled := fmt.Sprintf("GET /v1/questions/%s HTTP/1.1\r\nHost: askbridge\r\nAuthorization: Bearer %s\r\n\r\n", idA, agentA.Secret)
	conn, br := dialRaw(t, e, srv)
	// What the proxy forwards for agent-a.
	fmt.Fprintf(conn, "GET /v1/questions/%s/wait?timeout=1m HTTP/1.1\r\nHost: askbridge\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s", idA, agentA.Secret, len(smuggled), smuggled)
	answerParked(t, e, idA)
	readResponse(t, br)
	// The proxy now forwards agent-b's request on the same connection and
	// hands agent-b the next response.
	fmt.Fprintf(conn, "GET /v1/questions/%s HTTP/1.1\r\nHost: askbridge\r\nAuthorization: Bearer %s\r\n\r\n", idB, agentB.Secret)
	if status, b := readResponse(t, br); !strings.Contains(b, string(idB)) {
		t.Errorf("agent-b asked for %s and read %d %s", idB, status, b)
	}
}

// TestAWaitWithABodyFreedWhenClientLeaves: a wait sent with a body
// parks in its handler (it is not taken over), and a client that hangs up
// still frees it at once. Before, the body was left unread, and net/http
// only watches a connection for its client leaving once the request's
// body has been read: the wait held its watch and its goroutine until its
// timeout (up to MaxWait) with nobody to answer.
func TestAWaitWithABodyFreedWhenClientLeaves(t *testing.T) {
	e := newEnv(t)
	id := e.ask(agentA, "run-1")
	conn, _ := dialRaw(t, e, e.srv)
	fmt.Fprintf(conn, "GET /v1/questions/%s/wait?timeout=1m HTTP/1.1\r\nHost: askbridge\r\nAuthorization: Bearer %s\r\nContent-Length: 2\r\n\r\n{}", id, agentA.Secret)
	e.parked(id)
	conn.Close()
	if got := await(t, e, e.store.stopped, "the freeing of the wait whose client left"); got != id {
		t.Fatalf("the watch on %s stopped, want %s", got, id)
	}
	q, err := e.svc.Get(e.ctx(), id)
	if err != nil || !q.Open() {
		t.Fatalf("question after its waiter left: %+v, %v", q, err)
	}
}

// dialRaw opens a connection to srv for requests written by hand, bounded
// by the test's deadline (a guard against a hang, not a timing assertion).
func dialRaw(t *testing.T, e *env, srv *httptest.Server) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if deadline, ok := e.ctx().Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	return conn, bufio.NewReader(conn)
}

// answerParked answers id once a wait watches it, so the wait is the one
// the answer wakes (taken over, where it would be) rather than one that
// finds the question already answered.
func answerParked(t *testing.T, e *env, id core.QuestionID) {
	t.Helper()
	e.parked(id)
	if _, err := e.as(operator).Answer(e.ctx(), id, client.AnswerRequest{Answer: "Postgres"}); err != nil {
		t.Fatal(err)
	}
}

// readResponse reads the next response on br, whole.
func readResponse(t *testing.T, br *bufio.Reader) (int, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

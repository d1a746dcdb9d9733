package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// TestTakenWaitAnswersAClientSendingTooMuch: a client that sends more
// than 64 KiB behind its parked wait is answered at once, the question
// as it stands, and its connection closed, and what it sent is read a
// chunk at a time. Before, the parked read took every byte with a system
// call of its own for as long as the wait lasted: a client streaming a
// megabyte a second at its wait kept a core of the server busy until the
// wait's timeout.
func TestTakenWaitAnswersAClientSendingTooMuch(t *testing.T) {
	e := newEnv(t)
	var reads atomic.Int64
	srv, tookOver := takingServer(t, e, func(l net.Listener) net.Listener { return countingListener{l, &reads} })
	id := e.ask(agentA, "run-1")
	c := startWait(t, srv, id, "timeout=1m")
	await(t, e, tookOver, "the take-over of the wait")
	before := reads.Load()
	if _, err := c.Write(bytes.Repeat([]byte("x"), 64<<10+1)); err != nil {
		t.Fatal(err)
	}
	r := readReply(t, e, c) // within the test's guard, well before the wait's minute
	var w client.WaitResponse
	if err := json.Unmarshal(r.body, &w); err != nil || r.status != http.StatusOK || w.State != core.StateOpen {
		t.Fatalf("the wait of a client that sent too much: %d %s (%v)", r.status, r.body, err)
	}
	if !r.close || !r.eof {
		t.Errorf("the wait of a client that sent too much kept its connection (Connection: close %v, closed %v)", r.close, r.eof)
	}
	if n := reads.Load() - before; n > 64 {
		t.Errorf("the server read the 64 KiB sent behind the wait in %d reads; want them a chunk at a time", n)
	}
	if q, err := e.svc.Get(e.ctx(), id); err != nil || !q.Open() {
		t.Errorf("the question after its wait was answered early: %v, %v; want it open", q, err)
	}
}

// countingListener counts the reads made on the connections it accepts.
type countingListener struct {
	net.Listener
	reads *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, reads: l.reads}, nil
}

type countingConn struct {
	net.Conn
	reads *atomic.Int64
}

func (c countingConn) Read(b []byte) (int, error) {
	c.reads.Add(1)
	return c.Conn.Read(b)
}

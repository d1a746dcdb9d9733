package httpapi

import (
	"errors"
	"net"
	"sync"
)

// A wait parked on a connection taken over from net/http (parked.go) has
// no way back into net/http's own bookkeeping, so by itself it answers
// with Connection: close, and the client opens a new connection for its
// next request. Served through Listener, it hands the connection back
// instead: the listener yields it to http.Server again as if just
// accepted, and the connection keeps alive. The cost of a parked wait
// stays the same, since net/http's buffers are made anew only for the
// next request.

// reuseListener is a net.Listener that yields its own listener's new
// connections and the connections waits give back.
type reuseListener struct {
	net.Listener
	back     chan net.Conn
	accepted chan accepted
	start    sync.Once
	done     chan struct{}
	stop     sync.Once
	// mu makes a give-back and Close's emptying of back one step each, so
	// a connection is either queued before Close empties the queue or
	// closed by its giver; closed says Close has run.
	mu     sync.Mutex
	closed bool
}

type accepted struct {
	c   net.Conn
	err error
}

// maxGivenBack bounds the connections waiting to be accepted again; past
// it a connection is closed, as it would have been without the listener.
const maxGivenBack = 1024

// Listener wraps l, which the program then serves the API on, so that a
// parked wait's connection goes back to the server after its answer and
// keeps alive. Call it once, for the API's one listener; without it a
// parked wait's answer closes its connection.
func (s *Server) Listener(l net.Listener) net.Listener {
	rl := &reuseListener{Listener: l, back: make(chan net.Conn, maxGivenBack),
		accepted: make(chan accepted), done: make(chan struct{})}
	s.reuse.Store(rl)
	return rl
}

// Accept returns the next connection, new or given back.
func (l *reuseListener) Accept() (net.Conn, error) {
	l.start.Do(func() { go l.acceptLoop() })
	select {
	case c := <-l.back:
		return c, nil
	case a := <-l.accepted:
		return a.c, a.err
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// acceptLoop accepts on the wrapped listener until it is closed.
func (l *reuseListener) acceptLoop() {
	for {
		c, err := l.Listener.Accept()
		select {
		case l.accepted <- accepted{c, err}:
		case <-l.done:
			if c != nil {
				_ = c.Close()
			}
			return
		}
		if errors.Is(err, net.ErrClosed) {
			return
		}
	}
}

// giveBack hands c to the server to serve again, or closes it if the
// listener is closed or too many wait to be taken.
func (l *reuseListener) giveBack(c net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		_ = c.Close()
		return
	}
	select {
	case l.back <- c:
	default:
		_ = c.Close()
	}
}

// Close closes the wrapped listener and every connection still waiting
// to be accepted again.
func (l *reuseListener) Close() error {
	l.stop.Do(func() { close(l.done) })
	err := l.Listener.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for {
		select {
		case c := <-l.back:
			_ = c.Close()
		default:
			return err
		}
	}
}

// prefixConn is a connection whose first reads return what was read from
// it already (bytes of a request the client sent behind the wait's).
type prefixConn struct {
	net.Conn
	pre []byte
}

func (c *prefixConn) Read(b []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(b, c.pre)
		c.pre = c.pre[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

package redistest

import (
	"bytes"
	"net"
	"sync"
	"sync/atomic"
)

// link is a TCP relay in front of a primary: everyone reaches it through
// the link (Sentinels, clients and replicas), so that the replicas'
// configuration names the same address as the Sentinels do. Held, it
// keeps back what the primary sends on replication streams (connections
// that sent PSYNC), as a slow or congested network would, so the
// replicas fall behind while the primary goes on acknowledging writes; if
// the primary then dies, what was held is gone, exactly the window in
// which asynchronous replication loses writes. (A replica merely paused,
// with DEBUG SLEEP or SIGSTOP, loses nothing on one machine: the kernel
// keeps what was sent for it until it wakes.)
type link struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	held  bool
	conns []net.Conn
}

func newLink(target string) (*link, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &link{ln: ln, target: target}
	go l.accept()
	return l, nil
}

// addr is the relay's host:port.
func (l *link) addr() string { return l.ln.Addr().String() }

func (l *link) accept() {
	for {
		down, err := l.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", l.target)
		if err != nil {
			_ = down.Close()
			continue
		}
		l.mu.Lock()
		l.conns = append(l.conns, down, up)
		l.mu.Unlock()
		repl := &atomic.Bool{}
		go l.forward(down, up, repl) // commands (PSYNC marks a replica)
		go l.relay(up, down, repl)   // replies, or the primary's stream
	}
}

// forward copies what the far end sends to the primary, and marks the
// connection a replication stream once it sends PSYNC.
func (l *link) forward(down, up net.Conn, repl *atomic.Bool) {
	defer up.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := down.Read(buf)
		if n > 0 {
			if !repl.Load() && bytes.Contains(bytes.ToUpper(buf[:n]), []byte("PSYNC")) {
				repl.Store(true)
			}
			if _, werr := up.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// relay copies what the primary sends, unless the link is held and this
// is a replication stream: then it reads on (the primary never blocks)
// and drops what it reads, which is what a link that never delivers
// looks like once the primary is gone.
func (l *link) relay(up, down net.Conn, repl *atomic.Bool) {
	defer down.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := up.Read(buf)
		if n > 0 {
			l.mu.Lock()
			held := l.held && repl.Load()
			l.mu.Unlock()
			if !held {
				if _, werr := down.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// hold stops delivering the primary's stream for good.
func (l *link) hold() {
	l.mu.Lock()
	l.held = true
	l.mu.Unlock()
}

func (l *link) close() {
	_ = l.ln.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		_ = c.Close()
	}
}

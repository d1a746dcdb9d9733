package httpapi

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// closeCounted is one end of a pipe that counts its closes.
type closeCounted struct {
	net.Conn
	closed *atomic.Int32
}

func (c closeCounted) Close() error {
	c.closed.Add(1)
	return c.Conn.Close()
}

// TestGiveBackRacingCloseClosesEveryConnection: a wait giving its
// connection back while the listener closes either hands it over before
// the close (which then closes it) or closes it itself; no connection is
// left in the listener's queue with nobody to accept or close it.
// Before, a give-back that had seen the listener open could queue its
// connection after Close had emptied the queue (in about one run of
// this test in twenty).
func TestGiveBackRacingCloseClosesEveryConnection(t *testing.T) {
	const rounds, waits = 2000, 8 // the race's window is narrow: many rounds to meet it
	for range rounds {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		rl := (&Server{}).Listener(ln).(*reuseListener)
		var closed atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range waits {
			a, b := net.Pipe()
			defer b.Close()
			wg.Go(func() {
				<-start
				rl.giveBack(closeCounted{a, &closed})
			})
		}
		wg.Go(func() {
			<-start
			_ = rl.Close()
		})
		close(start)
		wg.Wait()
		if n := closed.Load(); n != waits {
			t.Fatalf("%d of %d connections given back around a close were closed", n, waits)
		}
	}
}

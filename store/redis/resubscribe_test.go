package redis_test

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	redisstore "github.com/askbridge/askbridge/store/redis"
)

// silencer forwards TCP connections to a target. silence makes every
// connection open at that moment go quiet both ways, as a half-open one
// does: what is sent is taken and dropped, and nothing comes back, while
// the connection stays open. Connections made later forward as before.
type silencer struct {
	addr  string
	mu    sync.Mutex
	quiet []*atomic.Bool
}

func newSilencer(t *testing.T, target string) *silencer {
	t.Helper()
	p := &silencer{}
	p.addr = forwardTCP(t, target, func(c, u net.Conn) {
		quiet := new(atomic.Bool)
		p.mu.Lock()
		p.quiet = append(p.quiet, quiet)
		p.mu.Unlock()
		go forward(c, u, quiet)
		go forward(u, c, quiet)
	})
	return p
}

// forwardTCP listens on a free loopback port until the test ends and
// hands each connection accepted there, with a new one to target, to
// handle, which forwards between them as it likes. It returns the
// address it listens on.
func forwardTCP(t *testing.T, target string, handle func(client, upstream net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			handle(c, u)
		}
	}()
	return l.Addr().String()
}

// forward copies from src to dst until either closes, dropping what it
// reads once quiet is set.
func forward(src, dst net.Conn, quiet *atomic.Bool) {
	defer src.Close()
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !quiet.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *silencer) silence() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, q := range p.quiet {
		q.Store(true)
	}
}

// TestHalfOpenSubscriptionIsReplaced: when the wake-up subscription's
// connection goes quiet without failing (a ping takes no error and gets
// no pong), the store subscribes anew on a new connection, and changes
// made afterwards wake its watchers again.
func TestHalfOpenSubscriptionIsReplaced(t *testing.T) {
	prev := redisstore.SetHealthEvery(100 * time.Millisecond)
	t.Cleanup(func() { redisstore.SetHealthEvery(prev) }) // after the stores below close
	p := newSilencer(t, server.Addr())
	prefix := randomPrefix()
	ca := goredis.NewClient(&goredis.Options{Addr: p.addr})
	t.Cleanup(func() { _ = ca.Close() })
	a := newStoreOn(t, ca, redisstore.Options{Prefix: prefix})
	b := newStore(t, redisstore.Options{Prefix: prefix}) // straight to Redis
	ctx := t.Context()

	q := question(0, "run-1", t0)
	mustCreate(t, b, q)
	ch, stop := a.Watch(q.ID)
	defer stop()
	p.silence()

	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for redisstore.Resubscriptions(a) == 0 {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("the quiet subscription was never replaced")
		}
	}
	select { // the replacement's own wake-up of every watcher
	case <-ch:
	default:
	}
	if _, err := b.Resolve(ctx, answer(q, "ada", t0)); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, ch, "a close after the subscription was replaced")
}

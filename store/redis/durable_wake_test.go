package redis_test

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// newClientAt is a client of the server at addr, closed when the test
// ends.
func newClientAt(t testing.TB, addr string) *goredis.Client {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// waitInSync waits until primary has a replica online, on the server's
// own WAIT (which returns once a replica acknowledges, or after its
// timeout) rather than a sleep between looks.
func waitInSync(t testing.TB, primary *redistest.Server) {
	t.Helper()
	for range 10 {
		if n, err := primary.Do("WAIT", "1", "500"); err != nil || n != "1" {
			continue
		}
		info, err := primary.Do("INFO", "replication")
		if err == nil && strings.Contains(info, "connected_slaves:1") && strings.Contains(info, "state=online") {
			return
		}
	}
	t.Fatal("the replica did not come online")
}

// watchTimes records when ch first receives, on a channel of its own.
func watchTimes(ch <-chan struct{}) <-chan time.Time {
	at := make(chan time.Time, 1)
	go func() {
		if _, ok := <-ch; ok {
			at <- time.Now()
		}
	}()
	return at
}

// With durability on, a close wakes no watcher, on another store or on
// its own, until its replicas hold it, and none at all when they do not:
// a waiter woken would read an answer a failover may lose. Here the
// replica it waits for does not exist, so the wait fails.
func TestDurableCloseWakesNoOneWhenTheWaitFails(t *testing.T) {
	ctx := t.Context()
	prefix := randomPrefix()
	timeout := 300 * time.Millisecond
	a := newStore(t, redisstore.Options{Prefix: prefix, Durability: redisstore.Durability{Replicas: 1, Timeout: timeout}})
	b := newStore(t, redisstore.Options{Prefix: prefix})
	q := question(0, "run-1", t0)
	mustCreate(t, b, q)

	chB, stopB := b.Watch(q.ID)
	defer stopB()
	chA, stopA := a.Watch(q.ID)
	defer stopA()
	wokeB, wokeA := watchTimes(chB), watchTimes(chA)

	_, err := a.Resolve(ctx, answer(q, "ada", t0.Add(time.Minute)))
	returned := time.Now()
	if !core.Unavailable(err) {
		t.Fatalf("a close no replica confirmed: %v, want a maybe-recorded error", err)
	}
	select {
	case at := <-wokeB:
		t.Fatalf("store B was woken %v before A's Commit returned, with a close no replica holds", returned.Sub(at))
	case at := <-wokeA:
		t.Fatalf("A's own watcher was woken %v before its Commit returned, with a close no replica holds", returned.Sub(at))
	default:
	}
	select {
	case <-wokeB:
		t.Fatal("store B was woken by a close whose wait failed")
	case <-wokeA:
		t.Fatal("A's own watcher was woken by a close whose wait failed")
	case <-time.After(2 * timeout):
	}
	// It is on the primary all the same: the caller was told "maybe".
	if got := mustGet(t, b, q.ID); got.State != core.StateAnswered {
		t.Fatalf("state on the primary %s, want answered", got.State)
	}
}

// With durability on, a close wakes the other stores' watchers once its
// replica holds it: the store publishes the wake-up after the wait, not
// the script before it. The replica is held asleep for a while as the
// close is sent, so a wake-up sent with the script comes long before one
// sent after the wait.
func TestDurableCloseWakesOthersOnceItHolds(t *testing.T) {
	ctx := t.Context()
	primary, replica := redistest.Start(t), redistest.Start(t)
	// No wait of five seconds for other replicas before the first sync.
	if _, err := primary.Do("CONFIG", "SET", "repl-diskless-sync-delay", "0"); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(primary.Addr())
	if _, err := replica.Do("REPLICAOF", host, port); err != nil {
		t.Fatal(err)
	}
	waitInSync(t, primary)

	prefix := randomPrefix()
	c := newClientAt(t, primary.Addr())
	a := newStoreOn(t, c, redisstore.Options{Prefix: prefix, Durability: redisstore.Durability{Replicas: 1, Timeout: 5 * time.Second}})
	b := newStoreOn(t, newClientAt(t, primary.Addr()), redisstore.Options{Prefix: prefix})
	// A first close, so that the close below finds its script loaded.
	warm := question(0, "run-0", t0)
	mustCreate(t, a, warm)
	if _, err := a.Resolve(ctx, answer(warm, "ada", t0.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	q := question(0, "run-1", t0)
	mustCreate(t, a, q)
	chB, stopB := b.Watch(q.ID)
	defer stopB()
	wokeB := watchTimes(chB)

	const hold = 400 * time.Millisecond
	slept := make(chan error, 1)
	go func() {
		_, err := replica.Do("DEBUG", "SLEEP", "0.4")
		slept <- err
	}()
	asleep(t, replica.Addr())
	start := time.Now()
	if _, err := a.Resolve(ctx, answer(q, "ada", t0.Add(time.Minute))); err != nil {
		t.Fatalf("durable close: %v", err)
	}
	returned := time.Now()
	if err := <-slept; err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-wokeB:
		// The replica could not acknowledge before it woke, 350ms after
		// the close was sent; leave room for a slow machine either way.
		if at.Sub(start) < hold/2 {
			t.Fatalf("store B was woken %v after the close was sent, while the replica slept (A returned after %v)",
				at.Sub(start), returned.Sub(start))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("store B was never woken by a close its replica holds")
	}
	if got := mustGet(t, b, q.ID); got.State != core.StateAnswered {
		t.Fatalf("B reads %s, want answered", got.State)
	}
}

// A script Redis no longer has (after a restart, a failover or SCRIPT
// FLUSH) costs a durable transition one wait, not two.
func TestDurableNoScriptWaitsOnce(t *testing.T) {
	ctx := t.Context()
	c := newClient(t)
	timeout := 300 * time.Millisecond
	s := newStoreOn(t, c, redisstore.Options{Durability: redisstore.Durability{Replicas: 1, Timeout: timeout}})
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	q := question(0, "run-1", t0)
	before := waitCalls(t, c)
	err := s.Create(ctx, q, event(q, core.EventAsked, q.CreatedAt), nil)
	if !core.Unavailable(err) {
		t.Fatalf("a create no replica confirmed: %v, want a maybe-recorded error", err)
	}
	// Counted by the server, not timed: a loaded machine makes one wait
	// of 300ms look like two.
	if n := waitCalls(t, c) - before; n != 1 {
		t.Fatalf("the first create after SCRIPT FLUSH sent WAIT %d times; want once (timeout %v)", n, timeout)
	}
	if got := mustGet(t, s, q.ID); got.State != core.StateOpen {
		t.Fatalf("the create is not on the primary: %+v", got)
	}
	if evs, err := s.QuestionEvents(ctx, q.ID, 0); err != nil || len(evs) != 1 {
		t.Fatalf("the create's events: %v %v; want one asked", evs, err)
	}
	// The other transitions' scripts came back with it, so their first
	// calls find them.
	for _, h := range []string{redisstore.ResolveHash(), redisstore.RenotifyHash()} {
		if ok, err := c.ScriptExists(ctx, h).Result(); err != nil || !ok[0] {
			t.Fatalf("script %s after the first durable call: %v %v", h, ok, err)
		}
	}
}

// waitCalls is how many WAIT commands the server behind c has run
// (INFO commandstats).
func waitCalls(t *testing.T, c *goredis.Client) int {
	t.Helper()
	info, err := c.Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_wait:calls="); ok {
			n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	return 0
}

// asleep returns once the server at addr no longer answers a PING within
// a few milliseconds: a DEBUG SLEEP sent to it has begun.
func asleep(t *testing.T, addr string) {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: addr, ReadTimeout: 20 * time.Millisecond, MaxRetries: -1, PoolSize: 1})
	defer c.Close()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		var ne net.Error
		if err := c.Ping(t.Context()).Err(); errors.As(err, &ne) && ne.Timeout() {
			return
		}
	}
	t.Fatal("the server never fell asleep")
}

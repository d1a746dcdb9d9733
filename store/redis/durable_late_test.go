package redis_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestDurableCloseHeldLateWakesItsWaiters: a durable close whose wait
// ran out (its replica was away, and came back) is announced once the
// replica holds it, and the waiters on every store wake. Before, nothing
// ever announced it: the answerer was told "maybe recorded", and an
// agent waiting on another replica slept until its own wait ended (an
// API long poll: up to five minutes), even after a retry of the answer
// found the question closed (which commits, and so announces, nothing).
func TestDurableCloseHeldLateWakesItsWaiters(t *testing.T) {
	ctx := t.Context()
	primary, replica := redistest.Start(t), redistest.Start(t)
	if _, err := primary.Do("CONFIG", "SET", "repl-diskless-sync-delay", "0"); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(primary.Addr())
	attach := func() {
		t.Helper()
		if _, err := replica.Do("REPLICAOF", host, port); err != nil {
			t.Fatal(err)
		}
		waitInSync(t, primary)
	}
	attach()

	prefix := randomPrefix()
	a := newStoreOn(t, newClientAt(t, primary.Addr()), redisstore.Options{Prefix: prefix, Durability: redisstore.Durability{Replicas: 1, Timeout: 200 * time.Millisecond}})
	b := newStoreOn(t, newClientAt(t, primary.Addr()), redisstore.Options{Prefix: prefix})
	q := question(0, "run-1", t0)
	mustCreate(t, b, q) // b waits for no replica: no timing to meet under load
	chB, stopB := b.Watch(q.ID)
	defer stopB()

	if _, err := replica.Do("REPLICAOF", "NO", "ONE"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Resolve(ctx, answer(q, "ada", t0.Add(time.Minute))); !core.Unavailable(err) {
		t.Fatalf("a close with its replica away: %v, want maybe-recorded", err)
	}
	select {
	case <-chB:
		t.Fatal("store B was woken before the replica held the close")
	default:
	}
	attach()
	select {
	case <-chB:
	case <-time.After(10 * time.Second):
		t.Fatal("a close its replica now holds has woken no waiter on store B")
	}
	if got := mustGet(t, b, q.ID); got.State != core.StateAnswered {
		t.Fatalf("B reads %s, want answered", got.State)
	}
}

// TestLateWakesWaitOnePerShard: closes whose waits ran out, with no
// replica to hold them, are waited for again by one wait per shard, not
// one each. Before, each had a loop of its own, holding a pooled
// connection in WAIT: with a replica away, a tick's worth of closes took
// the whole pool and the store failed for everything.
func TestLateWakesWaitOnePerShard(t *testing.T) {
	ctx := t.Context()
	primary := redistest.Start(t)
	prefix := randomPrefix()
	a := newStoreOn(t, newClientAt(t, primary.Addr()), redisstore.Options{Prefix: prefix, Durability: redisstore.Durability{Replicas: 1, Timeout: 300 * time.Millisecond}})
	b := newStoreOn(t, newClientAt(t, primary.Addr()), redisstore.Options{Prefix: prefix})
	const n = 10
	var qs []*core.Question
	for i := range n {
		q := question(0, core.RunID(fmt.Sprint("run-", i)), t0)
		mustCreate(t, b, q)
		qs = append(qs, q)
	}
	var wg sync.WaitGroup
	for _, q := range qs {
		wg.Go(func() {
			if _, err := a.Resolve(ctx, answer(q, "ada", t0.Add(time.Minute))); !core.Unavailable(err) {
				t.Errorf("a close with no replica: %v, want maybe-recorded", err)
			}
		})
	}
	wg.Wait()
	most := 0
	for end := time.Now().Add(time.Second); time.Now().Before(end); {
		info, err := primary.Do("INFO", "clients")
		if err != nil {
			t.Fatal(err)
		}
		_, v, _ := strings.Cut(info, "blocked_clients:")
		v, _, _ = strings.Cut(v, "\r\n")
		if n, _ := strconv.Atoi(strings.TrimSpace(v)); n > most {
			most = n
		}
	}
	if most > 1 {
		t.Fatalf("%d waits at once for %d closes of one shard; want one", most, n)
	}
}

// TestDurableChangeCutByItsCallerWakesItsWaiters: a durable change whose
// caller's context ended while its wait was out (a chat platform's reply
// window, say) is on the primary, and once the replica holds it, every
// store's waiters wake. Before, only a wait that ran out was announced
// late: a close or a renotice that failed with the caller's own deadline
// (with context_timeout_enabled, or a reply lost once the deadline had
// passed, which go-redis does not send again) published nothing, ever,
// and an agent waiting on another replica slept through an answer
// recorded and held until its own wait ran out.
func TestDurableChangeCutByItsCallerWakesItsWaiters(t *testing.T) {
	deadlineCut := goredis.Options{ContextTimeoutEnabled: true}
	// lostReply cuts the connection once the change's WAIT is blocked
	// and the caller's deadline has passed.
	lostReply := func(ctx context.Context, t *testing.T, primary *redistest.Server) {
		blockedOn(t, primary)
		<-ctx.Done()
		if _, err := primary.Do("CLIENT", "KILL", "TYPE", "normal"); err != nil {
			t.Error(err)
		}
	}
	closeIt := func(ctx context.Context, a *redisstore.Store, q *core.Question) error {
		_, err := a.Resolve(ctx, answer(q, "ada", t0.Add(time.Minute)))
		return err
	}
	later := q0Deadline.Add(time.Hour)
	renotice := func(ctx context.Context, a *redisstore.Store, q *core.Question) error {
		return a.Renotify(ctx, core.Renotice{QuestionID: q.ID, Deadline: later, Count: true, Now: t0,
			Event: event(q, core.EventReminded, t0)})
	}
	closed := func(q *core.Question) bool { return q.State == core.StateAnswered }
	moved := func(q *core.Question) bool { return q.Deadline.Equal(later) && q.Renotified == 1 }
	for _, tc := range []struct {
		name   string
		opts   goredis.Options
		cut    func(ctx context.Context, t *testing.T, primary *redistest.Server)
		change func(ctx context.Context, a *redisstore.Store, q *core.Question) error
		made   func(q *core.Question) bool
	}{
		{name: "close, deadline read as a timeout", opts: deadlineCut, change: closeIt, made: closed},
		{name: "close, reply lost after the deadline", cut: lostReply, change: closeIt, made: closed},
		{name: "renotice, deadline read as a timeout", opts: deadlineCut, change: renotice, made: moved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			primary, replica := redistest.Start(t), redistest.Start(t)
			if _, err := primary.Do("CONFIG", "SET", "repl-diskless-sync-delay", "0"); err != nil {
				t.Fatal(err)
			}
			prefix := randomPrefix()
			o := tc.opts
			o.Addr = primary.Addr()
			ca := goredis.NewClient(&o)
			t.Cleanup(func() { _ = ca.Close() })
			a := newStoreOn(t, ca, redisstore.Options{Prefix: prefix, Durability: redisstore.Durability{Replicas: 1, Timeout: 5 * time.Second}})
			b := newStoreOn(t, newClientAt(t, primary.Addr()), redisstore.Options{Prefix: prefix})
			// B makes the same change to a first question, so that A's
			// finds its script and goes to its wait at once.
			warm := question(0, "run-0", t0)
			mustCreate(t, b, warm)
			if err := tc.change(t.Context(), b, warm); err != nil {
				t.Fatal(err)
			}
			q := question(0, "run-1", t0)
			mustCreate(t, b, q)
			chB, stopB := b.Watch(q.ID)
			defer stopB()

			ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
			defer cancel()
			cut := make(chan struct{})
			go func() {
				defer close(cut)
				if tc.cut != nil {
					tc.cut(ctx, t, primary)
				}
			}()
			if err := tc.change(ctx, a, q); err == nil {
				t.Fatal("a change no replica held was told it succeeded")
			}
			<-cut
			if got := mustGet(t, b, q.ID); !tc.made(got) {
				t.Fatalf("the change is not on the primary (%+v): nothing to announce", got)
			}
			select {
			case <-chB:
				t.Fatal("store B was woken before any replica held the change")
			default:
			}
			host, port, _ := net.SplitHostPort(primary.Addr())
			if _, err := replica.Do("REPLICAOF", host, port); err != nil {
				t.Fatal(err)
			}
			waitInSync(t, primary)
			select {
			case <-chB:
			case <-time.After(10 * time.Second):
				t.Fatal("a change cut by its caller, now held by the replica, has woken no waiter on store B")
			}
		})
	}
}

// q0Deadline is the deadline question gives a question made at t0.
var q0Deadline = question(0, "", t0).Deadline

// blockedOn returns once a client of server is blocked (in a WAIT).
func blockedOn(t *testing.T, server *redistest.Server) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		info, err := server.Do("INFO", "clients")
		if err == nil && !strings.Contains(info, "blocked_clients:0") {
			return
		}
	}
	t.Error("no client ever blocked")
}

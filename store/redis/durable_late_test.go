package redis_test

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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

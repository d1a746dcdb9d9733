package loops_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

// waitFor polls cond until it holds, failing the test after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// TestRunTimesOut: Run's ticker runs core's Tick, so a question whose
// deadline has passed is closed as timed out without anyone calling Tick,
// and Run returns once its context ends.
func TestRunTimesOut(t *testing.T) {
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	svc, _ := coretest.Open(t, coretest.Options{Clock: clock})
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which?",
		Reversibility: core.Reversible, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() {
		ran <- loops.Run(ctx, svc, loops.Intervals{Tick: 10 * time.Millisecond}, func(err error) { t.Errorf("pass failed: %v", err) })
	}()
	waitFor(t, "the timeout", func() bool {
		got, err := svc.Get(t.Context(), q.ID)
		return err == nil && got.State == core.StateTimedOut
	})
	cancel()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

// TestLeadOneAtATime: of two replicas leading under one key, one runs at a
// time, the other takes over when the holder stops, and each hears its
// leadership begin and end.
func TestLeadOneAtATime(t *testing.T) {
	st := coretest.OpenStore(t)
	const key, ttl = "loops-test:lead", 200 * time.Millisecond
	var holders atomic.Int32
	held := make(chan string, 2)
	lead := func(ctx context.Context, owner string, changes *[]bool, mu *sync.Mutex) {
		leadQuietly(ctx, st, key, owner, ttl, func(ctx context.Context) {
			if n := holders.Add(1); n != 1 {
				t.Errorf("%s leads beside another: %d leaders", owner, n)
			}
			held <- owner
			<-ctx.Done()
			holders.Add(-1)
		}, func(h bool) { mu.Lock(); *changes = append(*changes, h); mu.Unlock() })
	}
	var (
		mu         sync.Mutex
		changesA   []bool
		changesB   []bool
		ctxA, stpA = context.WithCancel(t.Context())
		ctxB, stpB = context.WithCancel(t.Context())
		done       sync.WaitGroup
	)
	defer stpB()
	done.Go(func() { lead(ctxA, "a", &changesA, &mu) })
	if first := <-held; first != "a" {
		t.Fatalf("first leader %q, want a", first)
	}
	done.Go(func() { lead(ctxB, "b", &changesB, &mu) })
	stpA()
	select {
	case next := <-held:
		if next != "b" {
			t.Fatalf("next leader %q, want b", next)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("b never took the lease a gave up")
	}
	stpB()
	done.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(changesA) != 2 || !changesA[0] || changesA[1] || len(changesB) != 2 || !changesB[0] || changesB[1] {
		t.Fatalf("leadership changes: a %v, b %v; want [true false] each", changesA, changesB)
	}
}

// TestLeadReleases: a leader that stops releases its lease at once, so a
// successor need not wait for it to lapse (here an hour).
func TestLeadReleases(t *testing.T) {
	st := coretest.OpenStore(t)
	const key = "loops-test:release"
	ctx, stop := context.WithCancel(t.Context())
	held := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		leadQuietly(ctx, st, key, "a", time.Hour, func(ctx context.Context) { close(held); <-ctx.Done() }, nil)
	}()
	<-held
	if ok, err := st.Lease(t.Context(), key, "b", time.Hour); err != nil || ok {
		t.Fatalf("b took a's lease while a led: %v, %v", ok, err)
	}
	stop()
	<-done
	if ok, err := st.Lease(t.Context(), key, "b", time.Hour); err != nil || !ok {
		t.Fatalf("b could not take the lease a gave up: %v, %v", ok, err)
	}
}

// stalledLeases grants the first lease and then answers no renewal: each
// blocks until the test ends, as a call to a store that stopped
// answering does (a client that does not end its reads at the caller's
// deadline).
type stalledLeases struct {
	calls   atomic.Int32
	stalled chan struct{}
}

func (s *stalledLeases) Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	if s.calls.Add(1) == 1 {
		return true, nil
	}
	<-s.stalled
	return false, context.Canceled
}

func (s *stalledLeases) Release(context.Context, string, string) error { return nil }

// TestLeadEndsWhenRenewalsStall: a leader whose renewals stop coming back
// ends its work within about the lease's ttl, after which another
// replica may hold the lease. Before, it went on for as long as the
// renewal call hung (with Sentinel's retries, some twenty seconds), two
// replicas running one connection meanwhile.
func TestLeadEndsWhenRenewalsStall(t *testing.T) {
	st := &stalledLeases{stalled: make(chan struct{})}
	defer close(st.stalled)
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	ended := make(chan struct{})
	go leadQuietly(ctx, st, "loops-test:stall", "a", 200*time.Millisecond, func(ctx context.Context) { <-ctx.Done(); close(ended) }, nil)
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the leader's work went on with no renewal confirmed for fifty times the lease's ttl")
	}
}

// TestLeadGivesUpWhenItsWorkEnds: a leader whose work ends on its own
// (its connection gave up, with the lease still held) gives the lease
// up, so another replica runs the work. Before, it went on renewing the
// lease for as long as the process lived, with nothing running under
// it: no replica polled Telegram or held the Discord gateway, and none
// could take over.
func TestLeadGivesUpWhenItsWorkEnds(t *testing.T) {
	for name, open := range coretest.Stores {
		t.Run(name, func(t *testing.T) { leadGivesUpWhenItsWorkEnds(t, open(t)) })
	}
}

func leadGivesUpWhenItsWorkEnds(t *testing.T, st loops.Leases) {
	const key, ttl = "loops-test:ends", 200 * time.Millisecond
	ctx, stop := context.WithCancel(t.Context())
	var done sync.WaitGroup
	defer done.Wait()
	defer stop()
	aLeads := make(chan struct{})
	done.Go(func() {
		var once sync.Once
		leadQuietly(ctx, st, key, "a", ttl, func(context.Context) { once.Do(func() { close(aLeads) }) }, nil) // ends at once
	})
	within(t, aLeads, "a never led")
	bLeads := make(chan struct{})
	done.Go(func() {
		var once sync.Once
		leadQuietly(ctx, st, key, "b", ttl, func(ctx context.Context) { once.Do(func() { close(bLeads) }); <-ctx.Done() }, nil)
	})
	within(t, bLeads, "b never led: a kept the lease after its work had ended")
}

// leadQuietly is a Leader run for a test that need not hear the store's
// errors.
func leadQuietly(ctx context.Context, kv loops.Leases, key, owner string, ttl time.Duration, fn func(context.Context), onChange func(bool)) {
	loops.Leader{Leases: kv, Key: key, Owner: owner, TTL: ttl, OnChange: onChange}.Run(ctx, fn)
}

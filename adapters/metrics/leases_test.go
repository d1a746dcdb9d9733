package metrics_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/metrics"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// callsBack is the real embedded store, counting the watches core takes
// through its call-back (WatchFunc).
type callsBack struct {
	core.Store
	funcs atomic.Int32
}

func (s *callsBack) WatchFunc(id core.QuestionID, wake func()) func() {
	s.funcs.Add(1)
	return s.Store.WatchFunc(id, wake)
}

// TestLeaseWatchKeepsTheStoresCallBack: the program hands core the store
// wrapped by WatchLeases, and core's waits must still be called back by
// the store rather than each hold a goroutine relaying a channel (the
// wake-up burst's cost). Before WatchFunc was part of core.Store, the
// wrapper hid it, and every taken long poll in production held a relay.
func TestLeaseWatchKeepsTheStoresCallBack(t *testing.T) {
	st := &callsBack{Store: coretest.OpenStore(t)}
	m := metrics.New("dev", metrics.Source{})
	svc := coretest.Service(t, m.WatchLeases(st), coretest.Options{})
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Route: "default",
		Text: "Which?", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	w, err := svc.Watch(q.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if n := st.funcs.Load(); n != 1 {
		t.Fatalf("the wrapped store was watched through its call-back %d times; want 1", n)
	}
}

// unreachable is the real embedded store, whose Lease and Release fail
// while down is set, as a store out of this replica's reach does.
// While held is set, a Lease waits, having said so on inside, until
// held is closed.
type unreachable struct {
	core.Store
	down   atomic.Bool
	held   chan struct{}
	inside chan struct{}
}

func (s *unreachable) Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	if s.held != nil {
		s.inside <- struct{}{}
		<-s.held
	}
	if s.down.Load() {
		return false, errors.New("store unreachable")
	}
	return s.Store.Lease(ctx, key, owner, ttl)
}

func (s *unreachable) Release(ctx context.Context, key, owner string) error {
	if s.down.Load() {
		return errors.New("store unreachable")
	}
	return s.Store.Release(ctx, key, owner)
}

// TestLeaseHeldOnlyWhileConfirmed: leases_held says 1 only while the
// last renewal that was confirmed still covers now, which is how long a
// loops.Leader keeps polling; a replica that cannot reach the store
// stops polling when its lease runs out, and another may take the
// lease, so both must not say 1. A lease given up is not held, whether
// or not the store heard of it, also when a renewal sent before the
// release is answered after it (a Leader does not wait for one in
// flight). Before, a renewal that failed left the gauge at 1 for as long
// as the store stayed out of reach, and so did a release that failed.
func TestLeaseHeldOnlyWhileConfirmed(t *testing.T) {
	const key, owner, ttl = "telegram:bot1:lease", "replica-a", 4 * time.Second
	clock := core.NewSimClock(t0)
	st := &unreachable{Store: coretest.OpenStore(t)}
	m := metrics.New("dev", metrics.Source{Now: clock.Now})
	kv := m.WatchLeases(st)
	held := func(when string, want float64) {
		t.Helper()
		fams, err := m.Gatherer().Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			if f.GetName() != "askbridge_leases_held" {
				continue
			}
			for _, s := range f.GetMetric() {
				if s.GetLabel()[0].GetValue() == "telegram" {
					if got := s.GetGauge().GetValue(); got != want {
						t.Errorf("%s: leases_held{lease=\"telegram\"} = %v, want %v", when, got, want)
					}
					return
				}
			}
		}
		t.Errorf("%s: no leases_held{lease=\"telegram\"}", when)
	}
	ctx := t.Context()
	if ok, err := kv.Lease(ctx, key, owner, ttl); !ok || err != nil {
		t.Fatalf("taking the lease: %v, %v", ok, err)
	}
	held("taken", 1)
	st.down.Store(true)
	if _, err := kv.Lease(ctx, key, owner, ttl); err == nil {
		t.Fatal("a renewal through a store out of reach succeeded")
	}
	clock.Advance(ttl - time.Second)
	held("a renewal failed, the lease not yet run out", 1)
	clock.Advance(2 * time.Second)
	held("the lease run out unrenewed", 0)

	st.down.Store(false)
	if ok, err := kv.Lease(ctx, key, owner, ttl); !ok || err != nil {
		t.Fatalf("taking the lease again: %v, %v", ok, err)
	}
	held("taken again", 1)
	st.down.Store(true)
	if err := kv.Release(ctx, key, owner); err == nil {
		t.Fatal("a release through a store out of reach succeeded")
	}
	held("given up, the store not told", 0)

	st.down.Store(false)
	if ok, err := kv.Lease(ctx, key, owner, ttl); !ok || err != nil {
		t.Fatalf("taking the lease once more: %v, %v", ok, err)
	}
	st.held, st.inside = make(chan struct{}), make(chan struct{})
	renewed := make(chan error)
	go func() {
		_, err := kv.Lease(ctx, key, owner, ttl)
		renewed <- err
	}()
	<-st.inside
	if err := kv.Release(ctx, key, owner); err != nil {
		t.Fatal(err)
	}
	close(st.held)
	if err := <-renewed; err != nil {
		t.Fatal(err)
	}
	held("given up while a renewal was out", 0)
}

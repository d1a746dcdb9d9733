package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// leaseFirst is the real store, running first, once, before the lease of
// owner is taken: another replica's work landing in between.
type leaseFirst struct {
	core.Store
	owner string
	first func()
}

func (s *leaseFirst) Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	if f := s.first; f != nil && owner == s.owner {
		s.first = nil
		f()
	}
	return s.Store.Lease(ctx, key, owner, ttl)
}

// TestCatchUpReadsItsRecordUnderTheLease: a replica that read the
// downtime record before another replica finished the whole catch-up
// (and cleared it) re-notifies nothing when it then takes the lease: it
// reads the record again under the lease. Before, it went on from the
// record it had read, and every open question was reminded twice.
func TestCatchUpReadsItsRecordUnderTheLease(t *testing.T) {
	st := &leaseFirst{Store: coretest.OpenStore(t), owner: "a"}
	clock := core.NewSimClock(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	svc := coretest.Service(t, st, coretest.Options{Clock: clock})
	if _, err := svc.Boot(t.Context()); err != nil {
		t.Fatal(err)
	}
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which?", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Hour)
	if rep, err := svc.Boot(t.Context()); err != nil || rep.Down == 0 {
		t.Fatalf("boot after downtime: %+v, %v", rep, err)
	}
	clock.Advance(time.Second)
	st.first = func() {
		if n, done, err := svc.CatchUp(t.Context(), "b"); err != nil || n != 1 || !done {
			t.Errorf("replica b's catch-up: %d, %v, %v", n, done, err)
		}
	}
	if n, done, err := svc.CatchUp(t.Context(), "a"); err != nil || n != 0 || !done {
		t.Fatalf("replica a's catch-up after b's: %d reminded, done %v, %v; want none", n, done, err)
	}
	reminded := 0
	for _, e := range coretest.EventsOf(t, svc, q.ID) {
		if e.Kind == core.EventReminded {
			reminded++
		}
	}
	if reminded != 1 {
		t.Fatalf("the question was reminded %d times after one downtime", reminded)
	}
}

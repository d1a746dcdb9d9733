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

// catchUpAfterDowntime is a service over st with a route reminding every
// hour, three questions asked on it, and a downtime of 3h30m recorded by
// a second boot.
func catchUpAfterDowntime(t *testing.T, st core.Store) (*core.Service, []core.QuestionID) {
	t.Helper()
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	svc, err := core.New(st, reloadConfig(map[string]core.Route{"ops": {
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"alice"}}, RemindEvery: time.Hour}}), clock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	var ids []core.QuestionID
	for range 3 {
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which?", Reversibility: core.Reversible, Route: "ops"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, q.ID)
	}
	clock.Advance(3*time.Hour + 30*time.Minute)
	if rep, err := svc.Boot(ctx); err != nil || rep.Down == 0 {
		t.Fatalf("boot after downtime: %+v, %v", rep, err)
	}
	return svc, ids
}

// remindedOnce fails t unless each of ids has exactly one reminded event.
func remindedOnce(t *testing.T, svc *core.Service, ids []core.QuestionID) {
	t.Helper()
	for _, id := range ids {
		n := 0
		for _, e := range coretest.EventsOf(t, svc, id) {
			if e.Kind == core.EventReminded {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s was reminded %d times after one downtime, want once", id, n)
		}
	}
}

// TestCatchUpAfterAFailedReminderRemindsNoOneTwice: a catch-up whose page
// stopped at one question the store could not re-notify goes on, the
// next time, with that one alone; before, it did the whole page again
// and every other open question was reminded twice (once a second while
// a shard was failing over).
func TestCatchUpAfterAFailedReminderRemindsNoOneTwice(t *testing.T) {
	st := &failingRenotify{Store: coretest.OpenStore(t)}
	svc, ids := catchUpAfterDowntime(t, st)
	st.fail.Store(true)
	if _, done, err := svc.CatchUp(t.Context(), "a"); err == nil || done {
		t.Fatalf("a catch-up with a reminder not stored: done %v, %v", done, err)
	}
	if n, done, err := svc.CatchUp(t.Context(), "a"); err != nil || !done || n != 1 {
		t.Fatalf("the catch-up again: %d reminded, done %v, %v; want the one left", n, done, err)
	}
	remindedOnce(t, svc, ids)
}

// TestCatchUpStandsForTheReminderDue: after a downtime, the question
// re-notified by the catch-up is not reminded again, seconds later, by
// the route's own reminder that fell due while askbridge was away.
func TestCatchUpStandsForTheReminderDue(t *testing.T) {
	svc, ids := catchUpAfterDowntime(t, coretest.OpenStore(t))
	if n, done, err := svc.CatchUp(t.Context(), "a"); err != nil || !done || n != 3 {
		t.Fatalf("catch-up: %d reminded, done %v, %v", n, done, err)
	}
	if n, err := svc.Remind(t.Context()); err != nil || n != 0 {
		t.Fatalf("the reminders' pass after the catch-up: %d sent, %v; want none", n, err)
	}
	remindedOnce(t, svc, ids)
}

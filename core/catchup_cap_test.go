package core_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestCatchUpRemindsAQuestionAtItsReminderCap: a question on a reminding
// route that had its last reminder before a downtime is re-notified after
// it, once, and the route's own pass sends nothing more; before, the
// catch-up claimed the reminder due now, already sent, and skipped the
// oldest questions, those most in need of it.
func TestCatchUpRemindsAQuestionAtItsReminderCap(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	svc, err := core.New(coretest.OpenStore(t), reloadConfig(map[string]core.Route{"ops": {
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"alice"}}, RemindEvery: time.Hour, RemindMax: 1}}), clock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which?",
		Reversibility: core.Reversible, Route: "ops", Timeout: 20 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(61 * time.Minute)
	if n, err := svc.Remind(ctx); err != nil || n != 1 {
		t.Fatalf("first reminder: %d, %v", n, err)
	}
	if err := svc.Beat(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Advance(3 * time.Hour) // the bridge is away for three hours
	rep, err := svc.Boot(ctx)
	if err != nil || rep.Down == 0 {
		t.Fatalf("boot: %+v %v", rep, err)
	}
	n, done, err := svc.CatchUp(ctx, "a")
	if err != nil || !done {
		t.Fatalf("catch-up: %d, %v, %v", n, done, err)
	}
	m, err := svc.Remind(ctx)
	if err != nil {
		t.Fatal(err)
	}
	reminded := 0
	for _, e := range coretest.EventsOf(t, svc, q.ID) {
		if e.Kind == core.EventReminded {
			reminded++
		}
	}
	if n != 1 || m != 0 || reminded != 2 {
		t.Errorf("after a 3h downtime: catch-up reminded %d, the route's pass %d, reminded events %d; want 1, 0 and 2", n, m, reminded)
	}
}

// TestCatchUpStandsInForTheReminderDue: a reminder that fell due while
// the bridge was away is sent once, by the catch-up, and not again by the
// route's own pass seconds later.
func TestCatchUpStandsInForTheReminderDue(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	svc, err := core.New(coretest.OpenStore(t), reloadConfig(map[string]core.Route{"ops": {
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"alice"}}, RemindEvery: time.Hour, RemindMax: 3}}), clock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which?",
		Reversibility: core.Reversible, Route: "ops", Timeout: 20 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Beat(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Advance(90 * time.Minute) // away through the first reminder
	if _, err := svc.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	n, done, err := svc.CatchUp(ctx, "a")
	if err != nil || !done || n != 1 {
		t.Fatalf("catch-up: %d, %v, %v", n, done, err)
	}
	if m, err := svc.Remind(ctx); err != nil || m != 0 {
		t.Fatalf("the route's pass after the catch-up: %d, %v; want nothing more", m, err)
	}
	if got := coretest.Kinds(coretest.EventsOf(t, svc, q.ID)); len(got) != 2 || got[1] != core.EventReminded {
		t.Fatalf("events %v, want asked and one reminder", got)
	}
}

// TestCatchUpHandsItsLeaseBackOnFailure: a catch-up that fails partway
// (its store's listing failed) releases its lease, so another replica
// goes on at once rather than a minute later, when the lease lapses.
func TestCatchUpHandsItsLeaseBackOnFailure(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	st := &failingList{Store: coretest.OpenStore(t)}
	svc, err := core.New(st, reloadConfig(map[string]core.Route{"ops": apiRoute("alice")}), clock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which?",
		Reversibility: core.Reversible, Route: "ops", Timeout: 20 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Beat(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	if _, err := svc.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	st.fail.Store(true)
	if _, done, err := svc.CatchUp(ctx, "replica-a"); err == nil || done {
		t.Fatalf("the catch-up whose listing failed: done %v, %v", done, err)
	}
	if n, done, err := svc.CatchUp(ctx, "replica-b"); err != nil || !done || n != 1 {
		t.Fatalf("another replica's catch-up at once: %d, done %v, %v; want it to take over and finish", n, done, err)
	}
}

// failingList is a store whose next ListOpen fails.
type failingList struct {
	core.Store
	fail atomic.Bool
}

func (f *failingList) ListOpen(ctx context.Context, cursor string, limit int) ([]*core.Question, string, error) {
	if f.fail.CompareAndSwap(true, false) {
		return nil, "", errors.New("store down")
	}
	return f.Store.ListOpen(ctx, cursor, limit)
}

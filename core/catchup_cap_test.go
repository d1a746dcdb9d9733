package core_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// awayBridge is a bridge on st with one route, "ops", that has booted,
// been asked one question and beaten once: the clock is then advanced to
// simulate a downtime.
func awayBridge(t *testing.T, st core.Store, route core.Route) (*core.Service, *core.SimClock, *core.Question) {
	t.Helper()
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	svc, err := core.New(st, reloadConfig(map[string]core.Route{"ops": route}), clock)
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
	return svc, clock, q
}

// reminding is a route that reminds every hour, at most max times.
func reminding(max int) core.Route {
	return core.Route{Deciders: map[core.Surface][]string{core.SurfaceAPI: {"alice"}}, RemindEvery: time.Hour, RemindMax: max}
}

// TestCatchUpRemindsAQuestionAtItsReminderCap: a question on a reminding
// route that had its last reminder before a downtime is re-notified after
// it, once, and the route's own pass sends nothing more; before, the
// catch-up claimed the reminder due now, already sent, and skipped the
// oldest questions, those most in need of it.
func TestCatchUpRemindsAQuestionAtItsReminderCap(t *testing.T) {
	ctx := t.Context()
	svc, clock, q := awayBridge(t, coretest.OpenStore(t), reminding(1))
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
	svc, clock, q := awayBridge(t, coretest.OpenStore(t), reminding(3))
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

// TestCatchUpThatCannotClaimTheReminderDueIsNotDone: a catch-up whose
// claim of the reminder due now fails reports the failure and is not
// done, and sends nothing; the next one re-notifies the question once,
// and the route's own pass sends no second reminder. Before, the failure
// was dropped: the catch-up said it was done, and the route's pass sent
// the reminder the re-notice stood for as well.
func TestCatchUpThatCannotClaimTheReminderDueIsNotDone(t *testing.T) {
	ctx := t.Context()
	st := &failingLease{Store: coretest.OpenStore(t), prefix: "remind:"}
	svc, clock, q := awayBridge(t, st, reminding(3))
	if err := svc.Beat(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Advance(90 * time.Minute) // away through the first reminder
	if _, err := svc.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	st.fail.Store(true)
	if n, done, err := svc.CatchUp(ctx, "a"); err == nil || done || n != 0 {
		t.Fatalf("the catch-up whose claim of the reminder failed: %d, done %v, %v; want the failure, not done, nothing sent", n, done, err)
	}
	if n, done, err := svc.CatchUp(ctx, "a"); err != nil || !done || n != 1 {
		t.Fatalf("the catch-up taken again: %d, done %v, %v", n, done, err)
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
	st := &failingList{Store: coretest.OpenStore(t)}
	svc, clock, _ := awayBridge(t, st, apiRoute("alice"))
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

// failingLease is a store whose next Lease of a key starting with prefix
// fails.
type failingLease struct {
	core.Store
	prefix string
	fail   atomic.Bool
}

func (f *failingLease) Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	if strings.HasPrefix(key, f.prefix) && f.fail.CompareAndSwap(true, false) {
		return false, errors.New("store down")
	}
	return f.Store.Lease(ctx, key, owner, ttl)
}

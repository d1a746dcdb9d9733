package core_test

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestAReNoticeGivenUpLeavesItsReminderToTheRoute: the catch-up after a
// downtime claims the route's reminder due now, which its re-notice
// stands for; when that re-notice is given up on, the claim goes back,
// and the route's own pass sends the reminder once the store is well.
// A pass that found it claimed meanwhile does not take that for sent.
// Before, the claim stayed held (under an owner no retry knew) for as
// long as the question could be open: that reminder was never sent, and
// on a route with one reminder the question was never re-notified at all.
func TestAReNoticeGivenUpLeavesItsReminderToTheRoute(t *testing.T) {
	ctx := t.Context()
	svc, st, clock, q := askedAcrossDowntime(t)
	st.stuck = q.ID
	st.set(true)
	gaveUp := func() bool { return eventsOfKind(t, svc, q.ID, core.EventUndelivered) > 0 }
	for calls := 0; !gaveUp(); calls++ {
		if calls == 1000 {
			t.Fatal("the catch-up never gave up on the failing re-notice")
		}
		if _, done, _ := svc.CatchUp(ctx, "a"); done && !gaveUp() {
			t.Fatal("the catch-up is done with the re-notice neither stored nor given up on")
		}
		clock.Advance(time.Second)
		// The route's pass runs beside the catch-up, and finds the
		// reminder claimed while the re-notice is tried again.
		if !gaveUp() {
			if n, err := svc.Remind(ctx); err != nil || n != 0 {
				t.Fatalf("a pass while the re-notice is retried = %d, %v; want none beside it", n, err)
			}
		}
	}
	if n := eventsOfKind(t, svc, q.ID, core.EventUndelivered); n != 1 {
		t.Fatalf("%d undelivered events; want the re-notice given up on, once", n)
	}
	st.set(false)
	if n, err := svc.Remind(ctx); err != nil || n != 1 {
		t.Fatalf("the route's pass after the give-up = %d, %v; want its reminder 1 sent", n, err)
	}
	if n := eventsOfKind(t, svc, q.ID, core.EventReminded); n != 1 {
		t.Fatalf("%d reminded events; want the route's reminder, once", n)
	}
}

// TestAReNoticeStoredOnItsRetryStandsForTheReminder: a re-notice that
// failed and is stored on a later try still stands for the route's
// reminder due now: the route's pass does not send it beside it.
func TestAReNoticeStoredOnItsRetryStandsForTheReminder(t *testing.T) {
	ctx := t.Context()
	svc, st, clock, q := askedAcrossDowntime(t)
	st.stuck = q.ID
	st.set(true)
	if _, done, err := svc.CatchUp(ctx, "a"); err == nil || done {
		t.Fatalf("first catch-up: done %v, %v; want the failure reported", done, err)
	}
	st.set(false)
	done := false
	for calls := 0; !done && calls < 100; calls++ {
		clock.Advance(time.Second)
		_, done, _ = svc.CatchUp(ctx, "b")
	}
	if !done {
		t.Fatal("the catch-up is not done with the store back")
	}
	if n, err := svc.Remind(ctx); err != nil || n != 0 {
		t.Fatalf("the route's pass after the re-notice = %d, %v; want none beside it", n, err)
	}
	if n := eventsOfKind(t, svc, q.ID, core.EventReminded); n != 1 {
		t.Fatalf("%d reminded events; want the re-notice alone", n)
	}
}

// askedAcrossDowntime is a bridge with one question open on a route that
// reminds once an hour, once, booted again after 90 minutes down: its
// catch-up has a re-notice to make, which st can make fail.
func askedAcrossDowntime(t *testing.T) (*core.Service, *stuckRenotify, *core.SimClock, *core.Question) {
	t.Helper()
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	st := &stuckRenotify{Store: coretest.OpenStore(t)}
	svc := coretest.Service(t, st, coretest.Options{Clock: clock, Routes: map[string]core.Route{"ops": {
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"alice"}}, RemindEvery: time.Hour, RemindMax: 1}}})
	if _, err := svc.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which?",
		Reversibility: core.Reversible, Route: "ops", Timeout: 20 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(90 * time.Minute)
	if rep, err := svc.Boot(ctx); err != nil || rep.Down == 0 {
		t.Fatalf("boot after downtime: %+v, %v", rep, err)
	}
	return svc, st, clock, q
}

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

// A question keeps the reminders of the route it was asked under: a
// replica that starts (or restarts) on a file whose routes have none still
// reminds it, and stops scanning for reminders once no open question
// needs one.
func TestRemindAfterRestartWithoutReminders(t *testing.T) {
	ctx := context.Background()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	st := &listCounter{Store: coretest.OpenStore(t)}
	reminding := reloadConfig(map[string]core.Route{"ops": {
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"alice"}}, RemindEvery: time.Hour}})
	before, err := core.New(st, reminding, clock)
	if err != nil {
		t.Fatal(err)
	}
	q, err := before.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "which?",
		Reversibility: core.Reversible, Route: "ops"})
	if err != nil {
		t.Fatal(err)
	}

	// The restart: the same store, a file without reminders.
	after, err := core.New(st, reloadConfig(map[string]core.Route{"ops": apiRoute("alice")}), clock)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour + time.Minute)
	if n, err := after.Remind(ctx); err != nil || n != 1 {
		t.Fatalf("Remind after the restart = %d, %v; want the question asked under reminders reminded once", n, err)
	}
	kinds := coretest.Kinds(coretest.EventsOf(t, st, q.ID))
	if kinds[len(kinds)-1] != core.EventReminded {
		t.Fatalf("events %v: want the reminder last", kinds)
	}

	// Closed, nothing open needs a reminder: two passes find none, and
	// after them a pass no longer lists the open questions.
	if _, err := after.Cancel(ctx, core.CancelInput{QuestionID: q.ID, By: core.Decider{Surface: core.SurfaceAPI, ID: "alice"}, Reason: "done"}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Hour)
	for range 2 {
		if n, err := after.Remind(ctx); err != nil || n != 0 {
			t.Fatalf("Remind with nothing open = %d, %v", n, err)
		}
	}
	lists := st.lists.Load()
	if n, err := after.Remind(ctx); err != nil || n != 0 || st.lists.Load() != lists {
		t.Fatalf("a third quiet pass = %d, %v, and listed %d times; want no listing", n, err, st.lists.Load()-lists)
	}

	// A reload that brings reminders back reminds what is asked under it.
	if err := after.Reconfigure(reminding); err != nil {
		t.Fatal(err)
	}
	q2, err := after.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "and now?",
		Reversibility: core.Reversible, Route: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour + time.Minute)
	if n, err := after.Remind(ctx); err != nil || n != 1 {
		t.Fatalf("Remind after reminders came back = %d, %v (question %s)", n, err, q2.ID)
	}
}

// listCounter is a store that counts its ListOpen calls.
type listCounter struct {
	core.Store
	lists atomic.Int32
}

func (c *listCounter) ListOpen(ctx context.Context, cursor string, limit int) ([]*core.Question, string, error) {
	c.lists.Add(1)
	return c.Store.ListOpen(ctx, cursor, limit)
}

// failingRenotify is a store whose next Renotify fails.
type failingRenotify struct {
	core.Store
	fail atomic.Bool
}

func (s *failingRenotify) Renotify(ctx context.Context, r core.Renotice) error {
	if s.fail.CompareAndSwap(true, false) {
		return errors.New("failingRenotify: the store is gone")
	}
	return s.Store.Renotify(ctx, r)
}

// TestAReminderNotStoredIsSentLater: a reminder claimed but not stored
// (the store failing) gives its claim back, so the next pass sends it;
// before, the claim stayed, and that reminder was never sent.
func TestAReminderNotStoredIsSentLater(t *testing.T) {
	ctx := context.Background()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	st := &failingRenotify{Store: coretest.OpenStore(t)}
	svc, err := core.New(st, reloadConfig(map[string]core.Route{"ops": {
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"alice"}}, RemindEvery: time.Hour}}), clock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "which?",
		Reversibility: core.Reversible, Route: "ops"}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour + time.Minute)
	st.fail.Store(true)
	if n, err := svc.Remind(ctx); err == nil || n != 0 {
		t.Fatalf("a pass whose reminder could not be stored: %d, %v", n, err)
	}
	if n, err := svc.Remind(ctx); err != nil || n != 1 {
		t.Fatalf("the next pass: %d, %v; want the reminder sent", n, err)
	}
	if n, err := svc.Remind(ctx); err != nil || n != 0 {
		t.Fatalf("a third pass: %d, %v; want nothing more", n, err)
	}
}

// TestNoReminderAgainWhileReasked: a question reasked past the default
// retention and max timeout (30 days each) still gets its capped reminder
// once; before, the reminder's claim lapsed after 60 days while the
// question was open, and it was sent again.
func TestNoReminderAgainWhileReasked(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	svc, err := core.New(coretest.OpenStoreOn(t, clock.Now), reloadConfig(map[string]core.Route{"ops": {
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"alice"}}, RemindEvery: time.Minute, RemindMax: 1}}), clock)
	if err != nil {
		t.Fatal(err)
	}
	const month = 30 * 24 * time.Hour
	if _, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "which?",
		Reversibility: core.Reversible, Route: "ops", Timeout: month, OnTimeout: core.OnTimeoutReask, MaxReasks: 2}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute)
	if n, err := svc.Remind(ctx); err != nil || n != 1 {
		t.Fatalf("the first reminder: %d, %v", n, err)
	}
	for range 2 {
		clock.Advance(month)
		if rep, err := svc.Tick(ctx); err != nil || rep.Reasked != 1 {
			t.Fatalf("tick: %+v, %v", rep, err)
		}
	}
	clock.Advance(time.Minute)
	if n, err := svc.Remind(ctx); err != nil || n != 0 {
		t.Fatalf("reminders 60 days on, the cap reached long ago: %d, %v; want none", n, err)
	}
}

// TestAReminderPassWritesNothingForRemindersDone: once a question's
// reminder due now is claimed, later passes in the same interval, or
// after the route's cap, take no lease for it: a pass costs a store write
// per reminder sent, not one per open question every ten seconds (on the
// embedded store, each a committed write).
func TestAReminderPassWritesNothingForRemindersDone(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	st := &leaseCounter{Store: coretest.OpenStore(t)}
	svc, err := core.New(st, reloadConfig(map[string]core.Route{"ops": {
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"alice"}}, RemindEvery: time.Hour, RemindMax: 1}}), clock)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "which?",
			Reversibility: core.Reversible, Route: "ops", Timeout: 20 * time.Hour}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(time.Hour + time.Minute)
	if n, err := svc.Remind(ctx); err != nil || n != 3 {
		t.Fatalf("the first reminders: %d, %v", n, err)
	}
	before := st.leases.Load()
	for range 3 {
		clock.Advance(10 * time.Second)
		if n, err := svc.Remind(ctx); err != nil || n != 0 {
			t.Fatalf("a later pass: %d, %v", n, err)
		}
	}
	clock.Advance(2 * time.Hour) // past the cap of one
	if n, err := svc.Remind(ctx); err != nil || n != 0 {
		t.Fatalf("a pass past the cap: %d, %v", n, err)
	}
	if got := st.leases.Load() - before; got != 0 {
		t.Fatalf("four passes with nothing to send took %d leases, want none", got)
	}
}

// leaseCounter is a store that counts its Lease calls.
type leaseCounter struct {
	core.Store
	leases atomic.Int32
}

func (c *leaseCounter) Lease(ctx context.Context, name, owner string, ttl time.Duration) (bool, error) {
	c.leases.Add(1)
	return c.Store.Lease(ctx, name, owner, ttl)
}

package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// reminderCounter is a Slack courier that counts the reminders it sends
// and fails the first with fail, if set.
type reminderCounter struct {
	sent int
	fail error
}

func (*reminderCounter) Surface() core.Surface { return core.SurfaceSlack }
func (*reminderCounter) Post(_ context.Context, _ *core.Question, m core.MessageRef) (core.MessageRef, error) {
	m.ID = "m1"
	return m, nil
}
func (*reminderCounter) Update(context.Context, *core.Question, core.MessageRef) error { return nil }
func (*reminderCounter) Digest(context.Context, core.Digest, string) error             { return nil }
func (c *reminderCounter) Remind(context.Context, *core.Question, string) error {
	if err := c.fail; err != nil {
		c.fail = nil
		return err
	}
	c.sent++
	return nil
}

// remindingOps is a question on a route that reminds every minute in
// Slack's C1, a minute old and reminded (its reminder enqueued), on a
// store whose clock is clock, and the outbox's handle on it.
func remindingOps(t *testing.T) (*core.Service, core.Store, *core.SimClock, *core.Question) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	st := coretest.OpenStoreOn(t, clock.Now)
	svc := coretest.Service(t, st, coretest.Options{Clock: clock, Routes: map[string]core.Route{"ops": {
		Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}}, RemindEvery: time.Minute,
		Deciders: map[core.Surface][]string{core.SurfaceSlack: {"U1"}},
	}}})
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which?",
		Reversibility: core.Reversible, Route: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	posts, err := st.Claim(ctx, core.SurfaceSlack, "c0", 10, time.Hour, 0)
	if err != nil || len(posts) != 1 {
		t.Fatalf("the ask's card: %+v, %v", posts, err)
	}
	if err := st.Ack(ctx, core.SurfaceSlack, posts[0].ID); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	if n, err := svc.Remind(ctx); n != 1 || err != nil {
		t.Fatalf("Remind: %d, %v; want the first reminder", n, err)
	}
	return svc, st, clock, q
}

// claimReminder is the reminder the outbox hands consumer, idle at
// least minIdle if claimed before.
func claimReminder(t *testing.T, st core.Store, consumer string, minIdle time.Duration) core.Delivery {
	t.Helper()
	ds, err := st.Claim(t.Context(), core.SurfaceSlack, consumer, 10, minIdle, 0)
	if err != nil || len(ds) != 1 || ds[0].Kind != core.DeliverRemind {
		t.Fatalf("the reminder claimed by %s: %+v, %v", consumer, ds, err)
	}
	return ds[0]
}

// sentAgain are q's events that say a reminder went out again after an
// attempt that may have sent it.
func sentAgain(t *testing.T, svc *core.Service, q *core.Question) []core.Event {
	t.Helper()
	var out []core.Event
	for _, ev := range coretest.EventsOf(t, svc, q.ID) {
		if ev.Kind == core.EventReminded && strings.Contains(string(ev.Payload), `"repeat":true`) {
			out = append(out, ev)
		}
	}
	return out
}

// TestAReminderSentAgainIsFlagged: a reminder sent, whose delivery was
// then taken over by another consumer (its Ack lost, or its consumer
// stalled past the idle time), goes out again, and the question's log
// says that this one may repeat an earlier copy in the room, as a card
// posted again is flagged (law 4: at least once, never silently twice).
// Before, reminders had no posting mark: the second went out as if it
// were the only one, and the log showed one reminder.
func TestAReminderSentAgainIsFlagged(t *testing.T) {
	ctx := t.Context()
	svc, st, clock, q := remindingOps(t)
	c := &reminderCounter{}
	if err := svc.DeliverOne(ctx, c, claimReminder(t, st, "c1", time.Hour), nil); err != nil {
		t.Fatalf("the reminder: %v", err)
	}
	if got := sentAgain(t, svc, q); len(got) != 0 {
		t.Fatalf("the first reminder was flagged as sent again: %+v", got)
	}
	clock.Advance(2 * time.Minute) // c1 never acked it
	if err := svc.DeliverOne(ctx, c, claimReminder(t, st, "c2", time.Minute), nil); err != nil {
		t.Fatalf("the reminder taken over: %v", err)
	}
	got := sentAgain(t, svc, q)
	if c.sent != 2 || len(got) != 1 {
		t.Fatalf("%d reminders sent, %d flagged as sent again; want 2, the second flagged", c.sent, len(got))
	}
	if ev := got[0]; ev.Surface != core.SurfaceSlack || !strings.Contains(ev.Reason, "again") {
		t.Errorf("the repeat's event: surface %q, reason %q", ev.Surface, ev.Reason)
	}
}

// TestAReminderThePlatformRefusedIsNotFlagged: a reminder the platform
// refused (it sent nothing) leaves no posting mark, so its retry, the
// only copy in the room, is not flagged as a possible repeat.
func TestAReminderThePlatformRefusedIsNotFlagged(t *testing.T) {
	ctx := t.Context()
	svc, st, _, q := remindingOps(t)
	c := &reminderCounter{fail: &core.NotSent{Err: errors.New("channel_not_found")}}
	d := claimReminder(t, st, "c1", time.Hour)
	if err := svc.DeliverOne(ctx, c, d, nil); err == nil {
		t.Fatal("the refused reminder reported sent")
	}
	if err := svc.DeliverOne(ctx, c, d, nil); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if got := sentAgain(t, svc, q); c.sent != 1 || len(got) != 0 {
		t.Fatalf("%d reminders sent, %d flagged as sent again; want one, unflagged", c.sent, len(got))
	}
}

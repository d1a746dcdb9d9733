package storetest

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// A delivery enqueued with a delay (core.Delivery.Delay) is the outbox's
// one primitive for "send this later, unless told not to": it falls due
// only once its delay has passed on the store's clock, and Outbox.Cancel
// takes it back by its key until a claim takes it.
func init() {
	register("DelayedDeliveryFallsDueAfterItsDelay", testLaterFallsDue)
	register("DelayedDeliveryCancelledIsNeverClaimed", testLaterCancelled)
	register("DelayedDeliveryCancelHoldsForItsVersion", testLaterIfVersion)
	register("DelayedUpdateOfACommit", testLaterCommit)
	register("DelayedDeliveryEnqueuedTwiceWaitsOnce", testLaterTwice)
}

// later is a delivery kept whole (a digest) on Slack, delayed by delay.
func later(key string, delay time.Duration) core.Delivery {
	return core.Delivery{Key: key, Kind: core.DeliverDigest, Surface: core.SurfaceSlack, Room: "C1", Route: "ops",
		Since: epoch, CreatedAt: epoch, Delay: delay}
}

// claimed claims and acks what surface's outbox has now, and fails unless
// it is exactly the deliveries keyed keys, in any order, each handed out
// for the first time and with no delay left on it.
func (e *env) claimed(surface core.Surface, keys ...string) []core.Delivery {
	e.t.Helper()
	ds := e.claimAll(surface, "sender")
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	for _, d := range ds {
		if !want[d.Key] || d.Attempts != 1 || d.Delay != 0 {
			e.t.Fatalf("%s: unexpected delivery %+v (want %v)", surface, d, keys)
		}
		delete(want, d.Key)
	}
	if len(ds) != len(keys) {
		e.t.Fatalf("%s: %d deliveries %+v, want %v", surface, len(ds), ds, keys)
	}
	return ds
}

// ver is a version to cancel for (core.Pending.IfVersion).
func ver(v int64) *int64 { return &v }

func (e *env) cancel(p core.Pending) bool {
	e.t.Helper()
	ok, err := e.store.Cancel(e.t.Context(), p)
	if err != nil {
		e.t.Fatalf("cancel %+v: %v", p, err)
	}
	return ok
}

// testLaterFallsDue: a delayed delivery is not handed out before its
// delay has passed on the store's clock, and is, whole, once it has; one
// enqueued beside it without a delay goes at once; the outbox counts the
// waiting one. Cancelling it once claimed is refused.
func testLaterFallsDue(t *testing.T, h Harness) {
	e := newClockedEnv(t, h)
	d := later("digest/later/1", 2*time.Second)
	if err := e.store.Enqueue(t.Context(), []core.Delivery{d, later("digest/now/1", 0)}); err != nil {
		t.Fatal(err)
	}
	e.claimed(core.SurfaceSlack, "digest/now/1")
	stats, ok := e.store.(core.OutboxStats)
	if !ok {
		t.Fatal("the store reports no outbox stats")
	}
	if st, err := stats.OutboxStat(t.Context(), core.SurfaceSlack); err != nil || st.Depth != 1 {
		t.Fatalf("outbox stat %+v, %v; want the delayed delivery counted", st, err)
	}
	e.clock.Advance(2*time.Second - time.Millisecond)
	e.claimed(core.SurfaceSlack)

	e.clock.Advance(time.Millisecond)
	ds, err := e.store.Claim(t.Context(), core.SurfaceSlack, "sender", 10, time.Hour, 0)
	if err != nil || len(ds) != 1 {
		t.Fatalf("claim once due: %+v, %v", ds, err)
	}
	got := ds[0]
	if got.Key != d.Key || got.Kind != d.Kind || got.Route != "ops" || got.Room != "C1" || !got.Since.Equal(epoch) ||
		got.Attempts != 1 || got.Delay != 0 {
		t.Fatalf("delayed delivery as claimed: %+v", got)
	}
	if e.cancel(core.Pending{Surface: core.SurfaceSlack, Key: d.Key}) {
		t.Fatal("a claimed delivery was cancelled")
	}
	if err := e.store.Ack(t.Context(), core.SurfaceSlack, got.ID); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	e.claimed(core.SurfaceSlack)
}

// testLaterCancelled: a delayed delivery cancelled before it falls due is
// never handed out, nor is one cancelled once due but before any claim;
// a second cancel, one of an unknown key, and one on another surface
// cancel nothing; the deliveries beside them are untouched.
func testLaterCancelled(t *testing.T, h Harness) {
	e := newClockedEnv(t, h)
	if err := e.store.Enqueue(t.Context(), []core.Delivery{
		later("digest/a", time.Second), later("digest/b", time.Second), later("digest/c", 3*time.Second),
	}); err != nil {
		t.Fatal(err)
	}
	a := core.Pending{Surface: core.SurfaceSlack, Key: "digest/a"}
	if !e.cancel(a) {
		t.Fatal("a delayed delivery was not cancelled before it fell due")
	}
	if e.cancel(a) {
		t.Fatal("a delivery was cancelled twice")
	}
	if e.cancel(core.Pending{Surface: core.SurfaceSlack, Key: "digest/unknown"}) {
		t.Fatal("an unknown key was cancelled")
	}
	if e.cancel(core.Pending{Surface: core.SurfaceDiscord, Key: "digest/b"}) {
		t.Fatal("a key of another surface was cancelled")
	}
	if _, err := e.store.Cancel(t.Context(), core.Pending{Surface: core.SurfaceAPI, Key: "digest/b"}); core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("a cancel on a surface with no outbox: %v, want invalid", err)
	}
	e.clock.Advance(2 * time.Second) // b is due, and no claim has taken it
	if !e.cancel(core.Pending{Surface: core.SurfaceSlack, Key: "digest/b"}) {
		t.Fatal("a delivery fallen due but not claimed was not cancelled")
	}
	e.clock.Advance(time.Hour)
	e.claimed(core.SurfaceSlack, "digest/c")
}

// testLaterIfVersion: a cancel that holds for a version of the delivery's
// question cancels only while the question is at it: once the question
// has changed, the delivery stays and falls due.
func testLaterIfVersion(t *testing.T, h Harness) {
	e := newClockedEnv(t, h)
	q := e.ask(decision(core.DefaultRoute))
	at := e.get(q.ID).Version
	d := later("upd/1", time.Second)
	d.QuestionID = q.ID
	d2 := later("upd/2", time.Second)
	d2.QuestionID = q.ID
	if err := e.store.Enqueue(t.Context(), []core.Delivery{d, d2}); err != nil {
		t.Fatal(err)
	}
	if e.cancel(core.Pending{Surface: core.SurfaceSlack, Key: d.Key, QuestionID: q.ID, IfVersion: ver(at + 1)}) {
		t.Fatal("cancelled for a version the question is not at")
	}
	if e.cancel(core.Pending{Surface: core.SurfaceSlack, Key: d.Key, QuestionID: core.NewID(0), IfVersion: ver(at)}) {
		t.Fatal("cancelled for a question that does not exist")
	}
	if !e.cancel(core.Pending{Surface: core.SurfaceSlack, Key: d.Key, QuestionID: q.ID, IfVersion: ver(at)}) {
		t.Fatal("not cancelled while the question is at the version")
	}
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, OptionID: "pg", Decider: apiDecider("op")}); err != nil {
		t.Fatal(err)
	}
	if e.cancel(core.Pending{Surface: core.SurfaceSlack, Key: d2.Key, QuestionID: q.ID, IfVersion: ver(at)}) {
		t.Fatal("cancelled after the question changed")
	}
	e.clock.Advance(time.Second)
	e.claimed(core.SurfaceSlack, d2.Key)
}

// testLaterCommit: a change's update with a delay is enqueued with the
// change, in the same step, due only after its delay; the change's other
// update goes at once; one cancelled before it falls due never goes.
func testLaterCommit(t *testing.T, h Harness) {
	e := newClockedEnv(t, h)
	commit := func(q *core.Question, delay time.Duration) core.Change {
		t.Helper()
		cur := e.get(q.ID)
		c, err := core.Next(cur, core.Transition{QuestionID: q.ID, Now: e.clock.Now(),
			Resolution: &core.Resolution{State: core.StateAnswered, OptionID: "pg", Decider: apiDecider("op")}})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i := range c.Updates {
			if c.Updates[i].Message != nil && c.Updates[i].Message.ID == telegramCard {
				c.Updates[i].Delay = delay
				n++
			}
		}
		if n != 1 {
			t.Fatalf("the change updates the telegram card %d times: %+v", n, c.Updates)
		}
		if _, err := e.store.Commit(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	updateKey := func(c core.Change, card string) string {
		for _, d := range c.Updates {
			if d.Message != nil && d.Message.ID == card {
				return d.Key
			}
		}
		t.Fatalf("no update of card %s in %+v", card, c.Updates)
		return ""
	}

	q := e.askWithCards(decision("ops"))
	c := commit(q, 2*time.Second)
	e.claimed(core.SurfaceSlack, updateKey(c, slackCard))
	e.claimed(core.SurfaceTelegram)
	e.clock.Advance(2 * time.Second)
	ds := e.claimed(core.SurfaceTelegram, updateKey(c, telegramCard))
	if d := ds[0]; d.Kind != core.DeliverUpdate || d.QuestionID != q.ID || d.Message == nil || d.Message.ID != telegramCard ||
		d.Message.Room != "-1001" || !d.CreatedAt.Equal(c.Now) {
		t.Fatalf("delayed update as claimed: %+v", d)
	}

	q2 := e.askWithCards(decision("ops"))
	c2 := commit(q2, 2*time.Second)
	if !e.cancel(core.Pending{Surface: core.SurfaceTelegram, Key: updateKey(c2, telegramCard), QuestionID: q2.ID, IfVersion: ver(c2.Question.Version)}) {
		t.Fatal("the commit's delayed update was not cancelled")
	}
	e.claimed(core.SurfaceSlack, updateKey(c2, slackCard))
	e.clock.Advance(time.Hour)
	e.claimed(core.SurfaceTelegram)
}

// testLaterTwice: a key waits once. A delayed delivery enqueued again
// under its key, as a call sent again after its reply was lost enqueues
// it, is handed out once; and one cancel takes it back whole.
func testLaterTwice(t *testing.T, h Harness) {
	e := newClockedEnv(t, h)
	d := later("digest/twice", time.Second)
	for range 2 {
		if err := e.store.Enqueue(t.Context(), []core.Delivery{d}); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Advance(time.Second)
	e.claimed(core.SurfaceSlack, d.Key)

	d.Key = "digest/twice-cancelled"
	for range 2 {
		if err := e.store.Enqueue(t.Context(), []core.Delivery{d}); err != nil {
			t.Fatal(err)
		}
	}
	if !e.cancel(core.Pending{Surface: core.SurfaceSlack, Key: d.Key}) {
		t.Fatal("not cancelled")
	}
	e.clock.Advance(time.Hour)
	e.claimed(core.SurfaceSlack)
}

package telegram

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

// callbackWindow is about how long Telegram takes an answer to a
// callback query (heldTapTries says where the figure comes from).
const callbackWindow = 15 * time.Second

// TestPollingTapHeldByADeadReplicaIsAnsweredInTime: two replicas poll one
// bot on one Redis. The one polling takes a tap in hand and dies with it:
// its claim on the update stays, its lease lapses unreleased. The other,
// polling next, fetches the tap again and finds it claimed; once the
// claim has lasted longer than a live holder takes to answer, it answers
// the tapper, while Telegram still takes an answer, that the tap may or
// may not be recorded, and records nothing beside the claim. Before, it
// left the tap alone until the dead replica's claim lapsed a minute on
// (seenHold), long after Telegram refuses an answer: the tapper watched a
// spinner and was told nothing.
func TestPollingTapHeldByADeadReplicaIsAnsweredInTime(t *testing.T) {
	rs := coretest.Stores["redis"](t)
	st := coretest.NewStallStore(rs)
	dying := &deadKV{PollState: rs}
	e := newEnvOn(t, dying, st)
	qid, q := e.diesWithTap(st, dying)

	var waited atomic.Int64 // replica 2's waits before it answered the tap, passed at once
	e.secondPoller(rs, func(ctx context.Context, d time.Duration) bool {
		if !e.fake.Answered(qid) {
			waited.Add(int64(d))
		}
		return ctx.Err() == nil
	})
	note, err := e.fake.CallbackAnswer(qid, 10*time.Second)
	if err != nil {
		t.Fatalf("the tap the dead replica held was not answered: %v", err)
	}
	if note != card.TimedOutNote {
		t.Errorf("the tap was answered %q, want that it may or may not be recorded", note)
	}
	w := time.Duration(waited.Load())
	if w <= answerBudget {
		t.Errorf("replica 2 answered after waiting %s, within which a live holder answers the tap itself", w)
	}
	// A replica takes a dead one's lease within a lease's life and a try.
	if took := loops.DefaultLeaseTTL + loops.DefaultLeaseTTL/4 + w; took > callbackWindow {
		t.Errorf("the tapper was answered some %s after the holder died; Telegram takes an answer for about %s", took, callbackWindow)
	}
	if got, err := e.svc.Get(t.Context(), q.ID); err != nil || !got.Open() {
		t.Errorf("the tap was recorded beside the dead replica's claim: %+v, %v", got, err)
	}
	if n := countCalls(e.fake, "answerCallbackQuery"); n != 1 {
		t.Errorf("the tap was answered %d times, want once", n)
	}
}

// TestPollingTapHeldByADeadReplicaIsRecordedLate: a tap answered so while
// a dead replica's claim held it is recorded once the claim lapses, and
// its tapper is not answered again (Telegram would refuse it as too old).
func TestPollingTapHeldByADeadReplicaIsRecordedLate(t *testing.T) {
	d := diedOnEmbedded(t)
	e, qid, q := d.env, d.qid, d.q
	e.secondPoller(d.shared, func(ctx context.Context, _ time.Duration) bool {
		if e.fake.Answered(qid) {
			d.ahead.Advance(2 * time.Minute) // the dead replica's claim lapses
		}
		return ctx.Err() == nil
	})
	if note, err := e.fake.CallbackAnswer(qid, 10*time.Second); err != nil || note != card.TimedOutNote {
		t.Fatalf("the tap was answered %q, %v", note, err)
	}
	got := e.wait(q.ID, func(q *core.Question) bool { return !q.Open() })
	if got.Resolution == nil || got.Resolution.OptionID != "pg" {
		t.Errorf("resolution %+v, want PostgreSQL", got.Resolution)
	}
	if !e.fake.Wait(10*time.Second, func() bool { return e.fake.Pending() == 0 }) {
		t.Fatal("the poller did not move past the tap")
	}
	if n := countCalls(e.fake, "answerCallbackQuery"); n != 1 {
		t.Errorf("the tap was answered %d times, want once", n)
	}
}

// diesWithTap runs e's poller, has Alice tap PostgreSQL on a decision's
// card and the poller die with the tap in hand: its store work stalls in
// st (freed when the test ends), and its lease calls through dying fail
// from then on. It returns the tap's callback query id and the question.
func (e *env) diesWithTap(st *coretest.StallStore, dying *deadKV) (string, *core.Question) {
	e.t.Helper()
	e.a.opts.LeaseTTL = 400 * time.Millisecond
	e.a.tapBudget = func() <-chan time.Time { return nil } // it dies within the budget
	e.startRun()
	e.t.Cleanup(st.Free) // before the run's stop, which waits for the tap
	q := e.ask(decisionInput())
	m := e.card(q.ID, hasButtons)

	st.Arm(q.ID, nil)
	u, qid, err := e.fake.CallbackUpdate(userAlice, m.ChatID, m.ID, findButton(e.t, m, "PostgreSQL").Data)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.fake.Deliver(u); err != nil {
		e.t.Fatal(err)
	}
	e.entered(st)
	dying.kill() // nothing it does reaches the store any more
	return qid, q
}

// died is a poller that died with a tap in hand (diesWithTap) on the
// embedded store, whose clock runs ahead by what ahead is advanced, its
// lease in shared, where a second poller takes it over.
type died struct {
	*env
	shared *memKV
	ahead  *core.SimClock
	qid    string
	q      *core.Question
}

func diedOnEmbedded(t *testing.T) died {
	t.Helper()
	now, ahead := skewed()
	st := coretest.NewStallStore(coretest.OpenStoreOn(t, now))
	shared := newMemKV()
	dying := &deadKV{PollState: shared}
	e := newEnvOn(t, dying, st)
	qid, q := e.diesWithTap(st, dying)
	return died{env: e, shared: shared, ahead: ahead, qid: qid, q: q}
}

// secondPoller runs a second replica, polling the same bot with e's
// options on kv and waiting through sleep, until the test ends.
func (e *env) secondPoller(kv PollState, sleep func(context.Context, time.Duration) bool) {
	e.t.Helper()
	opts := e.a.opts
	opts.KV, opts.Owner = kv, "replica-2"
	a2, err := New(e.svc, opts)
	if err != nil {
		e.t.Fatal(err)
	}
	a2.sleep = sleep
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { a2.Run(ctx); close(ran) }()
	e.t.Cleanup(func() { cancel(); <-ran })
}

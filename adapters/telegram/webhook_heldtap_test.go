package telegram

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestWebhookTapHeldByADeadReplicaIsAnsweredInTime: two replicas take one
// bot's webhook on one store. The one Telegram sends a tap to takes it in
// hand and dies with it, unanswered: its claim on the update is renewed
// no more. Telegram sends the tap again, to the other replica, a second
// apart on the store's clock, until it gets a 2xx; a copy that comes
// while Telegram still takes an answer to the tap is handled, the tap
// recorded and its tapper answered, once. Before, the dead replica's
// claim held the update for a minute, every copy within Telegram's
// window was refused with a 503, and the tapper watched a spinner and
// was told nothing.
func TestWebhookTapHeldByADeadReplicaIsAnsweredInTime(t *testing.T) {
	now, ahead := skewed()
	shared := coretest.OpenStoreOn(t, now)
	dying := &dyingClaims{Store: shared}
	st := coretest.NewStallStore(dying)
	e := newEnvOn(t, nil, st)
	tap := e.stallWebhookTap(st)
	dying.dead.Store(true) // it dies: nothing it claims reaches the store any more

	e.secondWebhook(coretest.Service(t, shared, opsRoute(strconv.FormatInt(room, 10))))
	var after time.Duration // since the dead replica took the tap, on the store's clock
	for {
		status, err := e.fake.Deliver(tap.u)
		if err != nil {
			t.Fatal(err)
		}
		if status == http.StatusOK {
			break
		}
		after += time.Second
		if after+answerBudget > callbackWindow {
			t.Fatalf("every copy of the tap Telegram sent within the %s it takes an answer was refused (%d): the dead replica's claim held it", callbackWindow, status)
		}
		ahead.Advance(time.Second)
	}
	e.tapRecorded(t, tap.qid, tap.q.ID, 10*time.Second, "the tap the dead replica held")
	if n := countCalls(e.fake, "answerCallbackQuery"); n != 1 {
		t.Errorf("the tap was answered %d times, want once", n)
	}
}

// TestWebhookTapInHandKeepsItsClaim: a replica that lives, slow with a
// tap's store work, renews its claim on the tap while it works, so every
// copy Telegram sends meanwhile, long past the claim's first hold, is
// refused, and the tap is handled once, by its holder, its tapper
// answered once. Once the work is over its claim is renewed no more.
func TestWebhookTapInHandKeepsItsClaim(t *testing.T) {
	now, ahead := skewed()
	shared := coretest.OpenStoreOn(t, now)
	st := coretest.NewStallStore(shared)
	e := newEnvOn(t, nil, st)
	tick, asked := renewHook(e.a)
	tap := e.stallWebhookTap(st)
	waitFor(t, asked, "the tap's claim was never kept")

	e.secondWebhook(coretest.Service(t, shared, opsRoute(strconv.FormatInt(room, 10))))
	for after := time.Second; after <= 2*tapHold; after += time.Second {
		ahead.Advance(time.Second)
		tick <- time.Time{}
		waitFor(t, asked, "the claim's renewal never ended")
		if status, err := e.fake.Deliver(tap.u); err != nil || status != http.StatusServiceUnavailable {
			t.Fatalf("a copy %s after the tap was taken, its holder at work: %d, %v; want it refused, not handled beside the work", after, status, err)
		}
	}
	st.Free()
	if status := tap.status(); status != http.StatusOK {
		t.Errorf("the holder answered the tap's delivery %d", status)
	}
	e.tapRecorded(t, tap.qid, tap.q.ID, 10*time.Second, "the tap in hand")
	if n := countCalls(e.fake, "answerCallbackQuery"); n != 1 {
		t.Errorf("the tap was answered %d times, want once", n)
	}
	select {
	case tick <- time.Time{}:
		t.Error("the tap's claim was still being renewed after its handling ended")
	default:
	}
	if n := len(asked); n != 0 {
		t.Errorf("the claim's keeping waited for %d more renewals after its handling ended", n)
	}
	if status, err := e.fake.Deliver(tap.u); err != nil || status != http.StatusOK {
		t.Errorf("a copy after the tap was handled: %d, %v; want it dropped as handled", status, err)
	}
}

// stalledTap is a tap whose store work stalls on the replica Telegram
// sent it to (stallWebhookTap).
type stalledTap struct {
	u      map[string]any // the update, which Telegram sends again as it is
	qid    string         // its callback query's id
	q      *core.Question
	status func() int // waits for what the webhook answered the delivery
}

// stallWebhookTap runs e, in webhook mode, has Alice tap PostgreSQL on a
// decision's card, and waits until the tap's store work is stalled in st
// (freed when the test ends). Its tapper waits for the work, however long
// it takes: the replica does not answer the tap first.
func (e *env) stallWebhookTap(st *coretest.StallStore) stalledTap {
	e.t.Helper()
	e.a.tapBudget = func() <-chan time.Time { return nil }
	e.run()
	q := e.ask(decisionInput())
	m := e.card(q.ID, hasButtons)

	st.Arm(q.ID, nil)
	u, qid, err := e.fake.CallbackUpdate(userAlice, m.ChatID, m.ID, findButton(e.t, m, "PostgreSQL").Data)
	if err != nil {
		e.t.Fatal(err)
	}
	u["update_id"] = 9001
	var status int
	done := make(chan struct{})
	go func() { status, _ = e.fake.Deliver(u); close(done) }()
	e.entered(st)
	e.t.Cleanup(func() { st.Free(); <-done })
	return stalledTap{u: u, qid: qid, q: q, status: func() int { <-done; return status }}
}

// renewHook has a's taps' claims renewed (keep) when the test sends on
// tick; asked receives each time the keeping waits for a renewal: once
// it begins, and after each renewal.
func renewHook(a *Adapter) (tick chan time.Time, asked chan struct{}) {
	tick, asked = make(chan time.Time), make(chan struct{}, 64)
	a.renewTick = func() <-chan time.Time { asked <- struct{}{}; return tick }
	return tick, asked
}

// waitFor waits, bounded, for ch to receive, failing the test with why
// if it does not.
func waitFor(t *testing.T, ch <-chan struct{}, why string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal(why)
	}
}

// dyingClaims is a replica's store once the replica has died with an
// update in hand: no claim of its reaches the store any more, so the one
// on that update is never renewed.
type dyingClaims struct {
	core.Store
	dead atomic.Bool
}

func (s *dyingClaims) ClaimOnce(ctx context.Context, key, holder string, hold time.Duration) (core.OnceState, error) {
	if s.dead.Load() {
		return 0, context.DeadlineExceeded
	}
	return s.Store.ClaimOnce(ctx, key, holder, hold)
}

package telegram

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// storeFailure is how a store's failure reaches a door: internal.
var storeFailure = core.Internal("get", errors.New("the store is failing over"))

// skewed is a clock for a store that runs ahead of the wall clock by
// how far ahead is advanced: a claim's hold passes without a test
// sleeping through it.
func skewed() (func() time.Time, *core.SimClock) {
	ahead := core.NewSimClock(time.Time{})
	return func() time.Time { return time.Now().Add(ahead.Now().Sub(time.Time{})) }, ahead
}

func hasButtons(m telegramfake.Message) bool { return len(m.Buttons()) > 0 }

func (e *env) entered(st *coretest.StallStore) {
	e.t.Helper()
	select {
	case <-st.Entered():
	case <-time.After(10 * time.Second):
		e.t.Fatal("the update never reached the store")
	}
}

// TestPollingUpdateLeftByADeadPollerIsHandled: a poller that took a tap
// in hand and died with it (killed between marking the update and
// recording the answer) stored no offset past it, so the replica that
// polls next fetches it again, and answers it once the dead one's claim
// has lapsed. Before, the update was marked seen before it was handled,
// and the next poller dropped it as handled: the tap was lost, its
// tapper answered nothing.
func TestPollingUpdateLeftByADeadPollerIsHandled(t *testing.T) {
	d := diedOnEmbedded(t)
	// Replica 2 polls the same bot on the same store once the dead
	// one's lease lapses. Each wait of its passes on the store's clock
	// too, a minute and more.
	d.secondPoller(d.shared, func(ctx context.Context, _ time.Duration) bool {
		d.ahead.Advance(2 * time.Minute)
		return ctx.Err() == nil
	})
	d.tapRecorded(t, d.qid, d.q.ID, 15*time.Second, "the tap the dead poller held")
}

// TestPollingTapFailedOnTheStoreIsHandledAgain: a tap whose store work
// failed (its question's read, as a store failing over fails it) is not
// stored past, so the poller fetches it again and records it, and its
// tapper is answered once, with the truth. Before, the tapper was told
// it could not be recorded and the update was done with: the tap was
// lost unless its tapper tapped again. (A webhook's update is told so
// still, as Telegram retries one only so often:
// TestReplyNotRecordedIsTold.)
func TestPollingTapFailedOnTheStoreIsHandledAgain(t *testing.T) {
	st := coretest.NewStallStore(coretest.OpenStore(t))
	e := newEnvOn(t, newMemKV(), st)
	e.a.sleep = func(ctx context.Context, _ time.Duration) bool { return ctx.Err() == nil }
	e.startRun()
	q := e.ask(decisionInput())
	m := e.card(q.ID, hasButtons)

	st.Arm(q.ID, storeFailure)
	if note := e.click(userAlice, m, findButton(t, m, "PostgreSQL")); note != "Recorded: PostgreSQL" {
		t.Errorf("the tap was answered %q", note)
	}
	got := e.wait(q.ID, func(q *core.Question) bool { return !q.Open() })
	if got.Resolution == nil || got.Resolution.OptionID != "pg" {
		t.Errorf("resolution %+v, want PostgreSQL", got.Resolution)
	}
	if n := countCalls(e.fake, "answerCallbackQuery"); n != 1 {
		t.Errorf("the tap was answered %d times, want once", n)
	}
}

// TestWebhookRedeliveryIsHandled: in webhook mode, Telegram sends an
// update again that it got no 2xx for. When the replica that took it
// died with it in hand, the copy that reaches another replica is refused
// with a 503 while the dead one's claim lasts, and is handled once it
// lapses. Before, the update was marked seen before it was handled, and
// the copy was answered 200 and dropped: the tap was lost, its tapper
// answered nothing.
func TestWebhookRedeliveryIsHandled(t *testing.T) {
	now, ahead := skewed()
	st := coretest.NewStallStore(coretest.OpenStoreOn(t, now))
	e := newEnvOn(t, nil, st)
	e.a.renewTick = func() <-chan time.Time { return nil } // it dies: it renews its claim no more
	tap := e.stallWebhookTap(st)

	// Telegram sends it again, to another replica on the same store, and
	// again after a while until it gets a 2xx.
	e.secondWebhook(e.svc)
	for try := 1; ; try++ {
		status, err := e.fake.Deliver(tap.u)
		if err != nil {
			t.Fatal(err)
		}
		if status == http.StatusOK {
			break
		}
		if try == 5 {
			t.Fatalf("the update was still refused (%d) after %d copies", status, try)
		}
		ahead.Advance(time.Minute)
	}
	e.tapRecorded(t, tap.qid, tap.q.ID, 10*time.Second, "the tap")
}

// secondWebhook runs a second replica of e's bot on svc, in webhook
// mode with e's options, and has Telegram send updates to it from then
// on, until the test ends.
func (e *env) secondWebhook(svc *core.Service) {
	e.t.Helper()
	a2, err := New(svc, e.a.opts)
	if err != nil {
		e.t.Fatal(err)
	}
	mux := http.NewServeMux()
	a2.Mount(mux)
	srv := httptest.NewServer(mux)
	e.t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { a2.Run(ctx); close(ran) }()
	e.t.Cleanup(func() { cancel(); <-ran })
	e.fake.SetWebhookTarget(srv.URL + WebhookPath)
}

// failingAnswers is a store whose commits fail while fail is set, as
// one failing over does, counting the commits tried meanwhile.
type failingAnswers struct {
	core.Store
	fail  atomic.Bool
	tries atomic.Int64
}

func (s *failingAnswers) Commit(ctx context.Context, c core.Change) (*core.Question, error) {
	if s.fail.Load() {
		s.tries.Add(1)
		return nil, errors.New("failingAnswers: the store is failing over")
	}
	return s.Store.Commit(ctx, c)
}

// TestPollingReplyTheStoreKeepsFailingIsToldAtLast: a reply whose
// answer the store fails every time it is fetched again is handled a
// last time after heldTries fetches, its writer told it was not recorded,
// and the poller moves past it. Before, the offset stayed at the reply
// until Telegram dropped it a day later, and with it every update more
// than getUpdates' hundred after it.
func TestPollingReplyTheStoreKeepsFailingIsToldAtLast(t *testing.T) {
	st := &failingAnswers{Store: coretest.OpenStore(t)}
	e := newEnvOn(t, newMemKV(), st)
	e.a.sleep = func(ctx context.Context, _ time.Duration) bool { return ctx.Err() == nil }
	e.startRun()
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	prompt := e.prompt(nil)
	st.fail.Store(true)
	before := len(e.fake.Messages(room))
	if _, err := e.fake.Reply(userAlice, room, prompt.ID, "eu-west-1"); err != nil {
		t.Fatal(err)
	}
	if !e.fake.Wait(10*time.Second, func() bool { return len(e.fake.Messages(room)) > before && e.fake.Pending() == 0 }) {
		t.Fatalf("after %d tries the reply was neither told nor passed (%d pending)", st.tries.Load(), e.fake.Pending())
	}
	if got := e.lastText(before); !strings.Contains(got, "try again") {
		t.Errorf("the replier was told %q", got)
	}
	if n := st.tries.Load(); n != heldTries+1 {
		t.Errorf("the answer was tried %d times, want %d", n, heldTries+1)
	}
	st.fail.Store(false)
	if q, err := e.svc.Get(t.Context(), q.ID); err != nil || !q.Open() {
		t.Fatal("a reply that failed changed the question")
	}
}

// tapRecorded checks that the tap qid names, on question id, was
// answered "Recorded: PostgreSQL" within timeout and closed id so.
func (e *env) tapRecorded(t *testing.T, qid string, id core.QuestionID, timeout time.Duration, what string) {
	t.Helper()
	note, err := e.fake.CallbackAnswer(qid, timeout)
	if err != nil {
		t.Fatalf("%s was never answered: %v", what, err)
	}
	if note != "Recorded: PostgreSQL" {
		t.Errorf("%s was answered %q", what, note)
	}
	got := e.wait(id, func(q *core.Question) bool { return !q.Open() })
	if got.Resolution == nil || got.Resolution.OptionID != "pg" {
		t.Errorf("resolution %+v, want PostgreSQL", got.Resolution)
	}
}

package telegram

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/internal/coretest"
)

// TestPollingTapTheStoreKeepsFailingIsAnsweredInTime: a tap whose answer
// the store fails each time the poller fetches it again is tried again
// for a moment (a store's blip is recorded: TestPollingTapFailedOnTheStore
// IsHandledAgain), and then handled a last time while Telegram still
// takes an answer to its callback query: its tapper is told, once, that
// it was not recorded and to try again, and the poller moves past it.
// Before, a tap was held like a reply, for heldTries fetches a second
// apart: its tapper watched a spinner, and the answer came two minutes
// on, long after Telegram refuses one ("query is too old").
func TestPollingTapTheStoreKeepsFailingIsAnsweredInTime(t *testing.T) {
	st := &failingAnswers{Store: coretest.OpenStore(t)}
	e := newEnvOn(t, newMemKV(), st)
	var slept atomic.Int64 // the poller's waits, passed at once
	e.a.sleep = func(ctx context.Context, d time.Duration) bool {
		slept.Add(int64(d))
		return ctx.Err() == nil
	}
	e.startRun()
	q := e.ask(decisionInput())
	m := e.card(q.ID, hasButtons)

	st.fail.Store(true)
	slept.Store(0)
	note := e.click(userAlice, m, findButton(t, m, "PostgreSQL"))
	if waited := time.Duration(slept.Load()); waited > answerBudget {
		t.Errorf("the tapper was answered after the poller waited %s between fetches; Telegram takes an answer for seconds only", waited)
	}
	if !strings.Contains(strings.ToLower(note), "try again") || strings.HasPrefix(note, "Recorded") {
		t.Errorf("the tap was answered %q", note)
	}
	if n := st.tries.Load(); n < 2 {
		t.Errorf("the answer was tried %d times; a tap is tried again for a moment", n)
	}
	if !e.fake.Wait(10*time.Second, func() bool { return e.fake.Pending() == 0 }) {
		t.Error("the poller did not move past the tap")
	}
	if n := countCalls(e.fake, "answerCallbackQuery"); n != 1 {
		t.Errorf("the tap was answered %d times, want once", n)
	}
	st.fail.Store(false)
	if q, err := e.svc.Get(t.Context(), q.ID); err != nil || !q.Open() {
		t.Fatal("a tap that failed changed the question")
	}
}

package loops_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
)

// panicCourier panics on the post of a question whose text is "bad", as
// a courier's bug that one question's content sets off does, and posts
// the others, handing on the question posted.
type panicCourier struct {
	slackCourier
	posted chan core.QuestionID
}

func (c *panicCourier) Post(_ context.Context, q *core.Question, card core.MessageRef) (core.MessageRef, error) {
	if q.Text == "bad" {
		var rows []string
		_ = rows[len(q.Text)] // index out of range
	}
	c.posted <- q.ID
	card.ID = "m-" + string(q.ID)
	return card, nil
}

// TestACourierPanicIsAFailedAttempt: a courier that panics on one
// delivery fails that attempt, as any error of unknown outcome does: it
// is reported with where it panicked, given up after MaxAttempts with
// an undelivered event, and the room's next card is posted. Before, the
// panic ended the process; the delivery, still claimed, was taken over
// after MinIdle by another replica, which it ended too, and so on round
// every replica for ever, since a panic used up no attempt.
func TestACourierPanicIsAFailedAttempt(t *testing.T) {
	svc := opsOnSlack(t)
	bad, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Route: "ops",
		ToolCallID: "toolu_bad", Text: "bad", Reversibility: core.Reversible, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	good := askOps(t, svc, "toolu_good")
	var (
		mu       sync.Mutex
		reported []string
	)
	c := &panicCourier{posted: make(chan core.QuestionID, 1)}
	startDrain(t, svc, c, loops.DeliverOptions{Consumer: "c1", Block: 20 * time.Millisecond, MaxAttempts: 1,
		OnError: func(d core.Delivery, err error) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, err.Error())
		}})
	if got := within(t, c.posted, "the card after the one whose post panicked was never posted"); got != good.ID {
		t.Fatalf("posted %s, want %s", got, good.ID)
	}
	var e *core.Event
	waitFor(t, "the undelivered event of the card whose post panicked", func() bool { e = undelivered(t, svc, bad.ID); return e != nil })
	if !strings.Contains(e.Reason, "panic") {
		t.Errorf("the undelivered event's reason %q does not say the courier panicked", e.Reason)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 || !strings.Contains(reported[0], "index out of range") || !strings.Contains(reported[0], "panic_test.go") {
		t.Errorf("reported %q; want the panic once, with its value and where it was", reported)
	}
}

package loops_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/store/bolt"
)

// handBackCount is the embedded store, counting the deliveries handed
// back to the outbox.
type handBackCount struct {
	*bolt.Store
	retries atomic.Int32
}

func (s *handBackCount) Retry(ctx context.Context, d core.Delivery, consumer string, after time.Duration) error {
	s.retries.Add(1)
	return s.Store.Retry(ctx, d, consumer, after)
}

// heldCourier posts into a log and names one budget for every delivery.
type heldCourier struct {
	slackCourier
	budget core.Allowance
	mu     sync.Mutex
	posts  int
	posted chan struct{}
}

func (c *heldCourier) Post(_ context.Context, _ *core.Question, card core.MessageRef) (core.MessageRef, error) {
	c.mu.Lock()
	c.posts++
	c.mu.Unlock()
	c.posted <- struct{}{}
	card.ID = "m"
	return card, nil
}

func (c *heldCourier) Budgets(core.Delivery) []core.Allowance { return []core.Allowance{c.budget} }

// drainHeld asks cards questions into one room whose budget takes one
// send per 300 ms, held as c's budget says, drains them, and reports
// how many deliveries were handed back to the outbox on the way.
func drainHeld(t *testing.T, hold time.Duration) int32 {
	const cards, per = 3, 300 * time.Millisecond
	st := &handBackCount{Store: coretest.OpenStore(t)}
	svc := coretest.Service(t, st, coretest.Options{Routes: map[string]core.Route{"ops": {
		Rooms:    []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}},
		Deciders: map[core.Surface][]string{core.SurfaceSlack: {"U1"}},
	}}})
	for i := range cards {
		if _, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Route: "ops",
			ToolCallID: string(rune('a' + i)), Text: "Which?", Reversibility: core.Reversible, Timeout: time.Hour}); err != nil {
			t.Fatal(err)
		}
	}
	c := &heldCourier{budget: core.Allowance{Key: "room:C1", Limit: core.Limit{Rate: 1, Per: per}, Hold: hold},
		posted: make(chan struct{}, cards)}
	stop := startDrain(t, svc, c, loops.DeliverOptions{Consumer: "c1", Block: 50 * time.Millisecond, Budget: st})
	for range cards {
		within(t, c.posted, "the cards were not all posted")
	}
	stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.posts != cards {
		t.Errorf("%d posts, want %d", c.posts, cards)
	}
	return st.retries.Load()
}

// TestHoldWaitsInTheLane: a budget whose Hold covers its wait keeps the
// delivery in its lane until the budget has a send, rather than handing
// it back to the outbox (Telegram's chats, issue 31); without a Hold,
// a wait past budgetWait (200 ms) hands it back, as before.
func TestHoldWaitsInTheLane(t *testing.T) {
	if n := drainHeld(t, time.Second); n != 0 {
		t.Errorf("with a hold of a second, %d deliveries were handed back for a budget of one per 300 ms; want none", n)
	}
	if n := drainHeld(t, 0); n == 0 {
		t.Error("with no hold, no delivery was handed back for a budget of one per 300 ms: the test tests nothing")
	}
}

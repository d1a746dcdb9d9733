package loops_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/store/bolt"
)

// stopCourier's first post reaches the platform, which may post the
// card, but its answer never comes: the post blocks until the drain
// stops, and fails with the stop. Its later posts succeed, and it hands
// on the cards they were given.
type stopCourier struct {
	slackCourier
	entered chan struct{}
	posts   atomic.Int32
	sent    chan core.MessageRef
}

func (c *stopCourier) Post(ctx context.Context, q *core.Question, card core.MessageRef) (core.MessageRef, error) {
	if c.posts.Add(1) == 1 {
		close(c.entered)
		<-ctx.Done()
		return core.MessageRef{}, ctx.Err() // the card may be in the room; its answer never came
	}
	card.ID = "m-" + string(q.ID)
	select {
	case c.sent <- card:
	default:
	}
	return card, nil
}

// postAfterAStop asks a question into ops, stops a drain run with o while
// the question's card is on its way, and returns the card the next drain
// posts.
func postAfterAStop(t *testing.T, o loops.DeliverOptions) (*core.Service, *core.Question, core.MessageRef) {
	svc := opsOnSlack(t)
	c := &stopCourier{entered: make(chan struct{}), sent: make(chan core.MessageRef, 1)}
	stop := startDrain(t, svc, c, o)
	q := askOps(t, svc, "toolu_1")
	within(t, c.entered, "the post never started")
	stop()
	startDrain(t, svc, c, o)
	return svc, q, within(t, c.sent, "the card cut short by the stop was never posted")
}

// TestAStopUsesNoAttempt: a drain stopped while a post is on its way hands
// the delivery back without counting the attempt, so a delivery on its
// last attempt is sent by the next drain; before, the stop counted as a
// failed send, and on the last attempt the card was given up and never
// posted.
func TestAStopUsesNoAttempt(t *testing.T) {
	svc, q, _ := postAfterAStop(t, loops.DeliverOptions{Consumer: "c1", Block: 50 * time.Millisecond, MaxAttempts: 1})
	for _, e := range coretest.EventsOf(t, svc, q.ID) {
		if e.Kind == core.EventUndelivered {
			t.Fatalf("the stop recorded the card as undelivered: %+v", e)
		}
	}
}

// TestAStopMidPostFlagsTheRepost: a drain stopped while a post is on its
// way, whose outcome is unknown (the platform may have posted the card),
// hands the delivery back uncounted; the card the next drain posts is
// marked as a possible repeat, and its notified event says so (law 4).
// Before, the embedded store handed it out again under the same id and
// attempt count, the posting mark's owner was the same, its renewal
// counted as a first attempt, and the repeat went out unflagged.
func TestAStopMidPostFlagsTheRepost(t *testing.T) {
	svc, q, card := postAfterAStop(t, loops.DeliverOptions{Consumer: "c1", Block: 50 * time.Millisecond})
	if !card.Repeat {
		t.Errorf("the card posted after a post of unknown outcome is not marked as a possible repeat: %+v", card)
	}
	waitFor(t, "the card's record", func() bool {
		got, err := svc.Get(t.Context(), q.ID)
		return err == nil && len(got.Messages) == 1
	})
	var repeat bool
	for _, e := range coretest.EventsOf(t, svc, q.ID) {
		if e.Kind == core.EventNotified {
			var p struct{ Repeat bool }
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			repeat = p.Repeat && e.Reason != ""
		}
	}
	if !repeat {
		t.Error("the notified event does not say the room may hold an earlier copy")
	}
}

// budgetCutByStop is the embedded store as the drain's send budget,
// whose first call of the kind cut ("spend" or "until") is on its way
// when the drain stops: it answers with the stop's error, as a call to
// Redis cut short by its context does, or, with answers, as the store
// would have (the embedded store's budget never reads its context).
// Its other calls are the store's.
type budgetCutByStop struct {
	*bolt.Store
	cut     string
	answers bool
	calls   atomic.Int32
	entered chan struct{}
}

func (s *budgetCutByStop) cutShort(ctx context.Context, kind string) error {
	if kind != s.cut || s.calls.Add(1) != 1 {
		return nil
	}
	close(s.entered)
	<-ctx.Done()
	if s.answers {
		return nil
	}
	return ctx.Err()
}

func (s *budgetCutByStop) Spend(ctx context.Context, key string, l core.Limit) (time.Duration, error) {
	if err := s.cutShort(ctx, "spend"); err != nil {
		return 0, err
	}
	return s.Store.Spend(ctx, key, l)
}

func (s *budgetCutByStop) Until(ctx context.Context, key string, l core.Limit) (time.Duration, error) {
	if err := s.cutShort(ctx, "until"); err != nil {
		return 0, err
	}
	return s.Store.Until(ctx, key, l)
}

// budgetedPosts names one roomy budget for every delivery and posts as
// an HTTP client does: a call made with an ended context fails before it
// leaves, with an error that does not say whether the platform acted
// (Slack's adapter reads it so).
type budgetedPosts struct {
	slackCourier
	late atomic.Int32 // posts tried with an ended context
	sent chan core.MessageRef
}

func (c *budgetedPosts) Post(ctx context.Context, q *core.Question, card core.MessageRef) (core.MessageRef, error) {
	if err := ctx.Err(); err != nil {
		c.late.Add(1)
		return core.MessageRef{}, err
	}
	card.ID = "m-" + string(q.ID)
	c.sent <- card
	return card, nil
}

func (c *budgetedPosts) Budgets(core.Delivery) []core.Allowance {
	return []core.Allowance{{Key: "slack:C1", Limit: core.Limit{Rate: 100, Per: time.Second}}}
}

// TestAStopDuringABudgetCallSendsNothing: a drain stopped while a
// delivery's budget is asked (Until) or spent (Spend) sends nothing,
// reports no failure of the budget, and hands the delivery back; the
// next drain posts the card as a first post. Before, the call's error
// (the stop's) read as a budget store that could not say, so the send
// went ahead: cut short at Spend, the post went out with the ended
// context, failed of unknown outcome and kept its posting mark, and the
// next drain's card was flagged as a possible repeat of a post that never
// left; cut short either way, every such stop logged a budget failure.
// A spend that answers as if nothing had stopped (the embedded store's)
// sends nothing either: the gate hands back once the drain has stopped,
// whatever its budgets said.
func TestAStopDuringABudgetCallSendsNothing(t *testing.T) {
	for name, tc := range map[string]struct {
		cut     string
		answers bool
	}{
		"spend": {"spend", false}, "until": {"until", false}, "spend answered": {"spend", true},
	} {
		t.Run(name, func(t *testing.T) {
			st := &budgetCutByStop{Store: coretest.OpenStore(t), cut: tc.cut, answers: tc.answers, entered: make(chan struct{})}
			svc := onSlackC1(t, st)
			c := &budgetedPosts{sent: make(chan core.MessageRef, 1)}
			var (
				mu   sync.Mutex
				errs []error
			)
			o := loops.DeliverOptions{Consumer: "c1", Block: 50 * time.Millisecond, Budget: st,
				OnError: func(_ core.Delivery, err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }}
			stop := startDrain(t, svc, c, o)
			askOps(t, svc, "toolu_1")
			within(t, st.entered, "the budget was never asked")
			stop()
			mu.Lock()
			if len(errs) > 0 {
				t.Errorf("the stop was reported as failures: %v", errs)
			}
			mu.Unlock()
			if n := c.late.Load(); n > 0 {
				t.Errorf("%d posts went out with the stopped drain's ended context", n)
			}
			startDrain(t, svc, c, o)
			if card := within(t, c.sent, "the card handed back at the stop was never posted"); card.Repeat {
				t.Errorf("the card is flagged as a possible repeat, though no post of it ever left: %+v", card)
			}
		})
	}
}

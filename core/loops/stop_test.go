package loops_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
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

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

// stopCourier's first post blocks until the drain stops, and fails with
// the stop; its later posts succeed.
type stopCourier struct {
	entered chan struct{}
	posts   atomic.Int32
	sent    chan struct{}
}

func (*stopCourier) Surface() core.Surface { return core.SurfaceSlack }

func (c *stopCourier) Post(ctx context.Context, q *core.Question, card core.MessageRef) (core.MessageRef, error) {
	if c.posts.Add(1) == 1 {
		close(c.entered)
		<-ctx.Done()
		return card, ctx.Err()
	}
	card.ID = "m-" + string(q.ID)
	close(c.sent)
	return card, nil
}

func (*stopCourier) Update(context.Context, *core.Question, core.MessageRef) error { return nil }
func (*stopCourier) Remind(context.Context, *core.Question, string) error          { return nil }
func (*stopCourier) Digest(context.Context, core.Digest, string) error             { return nil }

// TestAStopUsesNoAttempt: a drain stopped while a post is on its way hands
// the delivery back without counting the attempt, so a delivery on its
// last attempt is sent by the next drain; before, the stop counted as a
// failed send, and on the last attempt the card was given up and never
// posted.
func TestAStopUsesNoAttempt(t *testing.T) {
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: map[string]core.Route{"ops": {
		Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}}, Deciders: map[core.Surface][]string{core.SurfaceSlack: {"U1"}},
	}}})
	c := &stopCourier{entered: make(chan struct{}), sent: make(chan struct{})}
	o := loops.DeliverOptions{Consumer: "c1", Block: 50 * time.Millisecond, MaxAttempts: 1}
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = loops.Deliver(ctx, svc, c, o) }()
	q := askOps(t, svc, "toolu_1")
	select {
	case <-c.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the post never started")
	}
	stop()
	<-done

	again, stopAgain := context.WithCancel(t.Context())
	doneAgain := make(chan struct{})
	go func() { defer close(doneAgain); _ = loops.Deliver(again, svc, c, o) }()
	defer func() { stopAgain(); <-doneAgain }()
	select {
	case <-c.sent:
	case <-time.After(10 * time.Second):
		t.Fatal("the card cut short by the stop was never posted")
	}
	for _, e := range coretest.EventsOf(t, svc, q.ID) {
		if e.Kind == core.EventUndelivered {
			t.Fatalf("the stop recorded the card as undelivered: %+v", e)
		}
	}
}

// lostCourier's first post reaches the platform, which posts the card,
// but its answer is lost: the post blocks until the drain stops and
// fails with the stop. Its later posts succeed, and it keeps the cards
// they were handed.
type lostCourier struct {
	entered chan struct{}
	posts   atomic.Int32
	sent    chan core.MessageRef
}

func (*lostCourier) Surface() core.Surface { return core.SurfaceSlack }

func (c *lostCourier) Post(ctx context.Context, q *core.Question, card core.MessageRef) (core.MessageRef, error) {
	if c.posts.Add(1) == 1 {
		close(c.entered)
		<-ctx.Done()
		return core.MessageRef{}, ctx.Err() // the card is in the room; its answer never came
	}
	card.ID = "m2-" + string(q.ID)
	c.sent <- card
	return card, nil
}

func (*lostCourier) Update(context.Context, *core.Question, core.MessageRef) error { return nil }
func (*lostCourier) Remind(context.Context, *core.Question, string) error          { return nil }
func (*lostCourier) Digest(context.Context, core.Digest, string) error             { return nil }

// TestAStopMidPostFlagsTheRepost: a drain stopped while a post is on its
// way, whose outcome is unknown (the platform may have posted the card),
// hands the delivery back uncounted; the card the next drain posts is
// marked as a possible repeat, and its notified event says so (law 4).
// Before, the embedded store handed it out again under the same id and
// attempt count, the posting mark's owner was the same, its renewal
// counted as a first attempt, and the repeat went out unflagged.
func TestAStopMidPostFlagsTheRepost(t *testing.T) {
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: map[string]core.Route{"ops": {
		Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}}, Deciders: map[core.Surface][]string{core.SurfaceSlack: {"U1"}},
	}}})
	c := &lostCourier{entered: make(chan struct{}), sent: make(chan core.MessageRef, 1)}
	o := loops.DeliverOptions{Consumer: "c1", Block: 50 * time.Millisecond}
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = loops.Deliver(ctx, svc, c, o) }()
	q := askOps(t, svc, "toolu_1")
	select {
	case <-c.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the post never started")
	}
	stop()
	<-done

	again, stopAgain := context.WithCancel(t.Context())
	doneAgain := make(chan struct{})
	go func() { defer close(doneAgain); _ = loops.Deliver(again, svc, c, o) }()
	defer func() { stopAgain(); <-doneAgain }()
	var card core.MessageRef
	select {
	case card = <-c.sent:
	case <-time.After(10 * time.Second):
		t.Fatal("the card cut short by the stop was never posted again")
	}
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

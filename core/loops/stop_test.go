package loops_test

import (
	"context"
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

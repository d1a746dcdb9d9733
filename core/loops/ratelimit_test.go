package loops_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

// limitedCourier answers its first limited posts with a retry-after (a
// platform's 429, or Telegram's adapter before getMe answers), then posts.
type limitedCourier struct {
	limited int32
	posts   atomic.Int32
	sent    chan struct{}
}

func (*limitedCourier) Surface() core.Surface { return core.SurfaceSlack }

func (c *limitedCourier) Post(_ context.Context, q *core.Question, card core.MessageRef) (core.MessageRef, error) {
	if n := c.posts.Add(1); c.limited < 0 || n <= c.limited {
		return core.MessageRef{}, &core.RetryAfter{After: time.Millisecond, Err: errors.New("429 Too Many Requests")}
	}
	card.ID = "m-" + string(q.ID)
	close(c.sent)
	return card, nil
}

func (*limitedCourier) Update(context.Context, *core.Question, core.MessageRef) error { return nil }
func (*limitedCourier) Remind(context.Context, *core.Question, string) error          { return nil }
func (*limitedCourier) Digest(context.Context, core.Digest, string) error             { return nil }

func opsOnSlack(t *testing.T) *core.Service {
	return coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: map[string]core.Route{"ops": {
		Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}}, Deciders: map[core.Surface][]string{core.SurfaceSlack: {"U1"}},
	}}})
}

func runDrain(t *testing.T, svc *core.Service, c core.Courier, o loops.DeliverOptions) {
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = loops.Deliver(ctx, svc, c, o) }()
	t.Cleanup(func() { stop(); <-done })
}

// TestRetryAfterUsesNoAttempt: a delivery the platform answers with a
// retry-after again and again is due again when it says, its attempts
// not counted, so it is posted once the platform takes it, however many
// times it was asked to wait. Before, each retry-after counted towards
// MaxAttempts, and eight of them (a Telegram outage of a few minutes at
// start) dropped the card.
func TestRetryAfterUsesNoAttempt(t *testing.T) {
	svc := opsOnSlack(t)
	c := &limitedCourier{limited: 12, sent: make(chan struct{})}
	dropped := make(chan error, 1)
	runDrain(t, svc, c, loops.DeliverOptions{Consumer: "c1", Block: 20 * time.Millisecond, MaxAttempts: 3,
		OnError: func(d core.Delivery, err error) {
			var ra *core.RetryAfter
			if !errors.As(err, &ra) {
				select {
				case dropped <- err:
				default:
				}
			}
		}})
	q := askOps(t, svc, "toolu_1")
	select {
	case <-c.sent:
	case err := <-dropped:
		t.Fatalf("the rate-limited card failed otherwise: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatalf("the rate-limited card was never posted (%d tries)", c.posts.Load())
	}
	for _, e := range coretest.EventsOf(t, svc, q.ID) {
		if e.Kind == core.EventUndelivered {
			t.Fatalf("a card the platform only asked to wait for was given up: %+v", e)
		}
	}
}

// TestRetryAfterEndsWithAge: a delivery the platform keeps answering with
// a retry-after is not retried for ever: once older than RateLimitedFor
// it is dropped, and the question's log says so; not before, however
// many times it was asked to wait.
func TestRetryAfterEndsWithAge(t *testing.T) {
	const limit = time.Second
	svc := opsOnSlack(t)
	c := &limitedCourier{limited: -1, sent: make(chan struct{})}
	runDrain(t, svc, c, loops.DeliverOptions{Consumer: "c1", Block: 20 * time.Millisecond, RateLimitedFor: limit})
	q := askOps(t, svc, "toolu_1")
	var dropped time.Time
	waitFor(t, "the undelivered event", func() bool {
		for _, e := range coretest.EventsOf(t, svc, q.ID) {
			if e.Kind == core.EventUndelivered {
				dropped = e.At
				return true
			}
		}
		return false
	})
	if age := dropped.Sub(q.CreatedAt); age < limit {
		t.Fatalf("dropped after %d tries at %v old; want it tried until it was %v old", c.posts.Load(), age, limit)
	}
}

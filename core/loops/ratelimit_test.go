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

// limitedCourier answers its first limited posts (all of them if limited
// is negative) with a retry-after of after (a platform's 429), then
// posts.
type limitedCourier struct {
	slackCourier
	limited int32
	after   time.Duration
	posts   atomic.Int32
	sent    chan struct{}
	// tried, when set, hears the time of each post tried while it has room.
	tried chan time.Time
}

func (c *limitedCourier) Post(_ context.Context, q *core.Question, card core.MessageRef) (core.MessageRef, error) {
	if c.tried != nil {
		select {
		case c.tried <- time.Now():
		default:
		}
	}
	if n := c.posts.Add(1); c.limited < 0 || n <= c.limited {
		return core.MessageRef{}, &core.RetryAfter{After: c.after, Err: errors.New("429 Too Many Requests")}
	}
	card.ID = "m-" + string(q.ID)
	close(c.sent)
	return card, nil
}

// TestRetryAfterUsesNoAttempt: a delivery the platform answers with a
// retry-after again and again is due again when it says, its attempts
// not counted, so it is posted once the platform takes it, however many
// times it was asked to wait. Before, each retry-after counted towards
// MaxAttempts, and eight of them (a Telegram outage of a few minutes at
// start) dropped the card.
func TestRetryAfterUsesNoAttempt(t *testing.T) {
	svc := opsOnSlack(t)
	c := &limitedCourier{limited: 12, after: time.Millisecond, sent: make(chan struct{})}
	dropped := make(chan error, 1)
	startDrain(t, svc, c, loops.DeliverOptions{Consumer: "c1", Block: 20 * time.Millisecond, MaxAttempts: 3,
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
	c := &limitedCourier{limited: -1, after: time.Millisecond, sent: make(chan struct{})}
	startDrain(t, svc, c, loops.DeliverOptions{Consumer: "c1", Block: 20 * time.Millisecond, RateLimitedFor: limit})
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

// TestRetryAfterNamingNoWaitBacksOff: a retry-after that names no wait
// (a Retry-After of 0, a RetryAfter without After) is retried after the
// drain's back-off, not at once. It uses no attempt, so retried at once
// it was sent again as fast as the drain could go, at a platform pushing
// back, for a day (RateLimitedFor).
func TestRetryAfterNamingNoWaitBacksOff(t *testing.T) {
	const wait, tries = 100 * time.Millisecond, 4
	svc := opsOnSlack(t)
	c := &limitedCourier{limited: -1, sent: make(chan struct{}), tried: make(chan time.Time, tries)}
	stop := startDrain(t, svc, c, loops.DeliverOptions{Consumer: "c1", Block: 20 * time.Millisecond, RetryWait: wait})
	defer stop()
	askOps(t, svc, "toolu_1")
	var last time.Time
	for i := range tries {
		select {
		case at := <-c.tried:
			// A slow machine only makes the gaps longer: half the back-off
			// is a bound it cannot miss, and far above an immediate retry.
			if i > 0 && at.Sub(last) < wait/2 {
				t.Fatalf("post %d came %v after the one before, to a platform answering a retry-after of 0; want a back-off of about %v", i+1, at.Sub(last), wait)
			}
			last = at
		case <-time.After(10 * time.Second):
			t.Fatalf("post %d never tried", i+1)
		}
	}
}

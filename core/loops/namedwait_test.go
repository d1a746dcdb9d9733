package loops_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

// retryWaits is the store with the wait of every retry the drain asks
// for heard on waits.
type retryWaits struct {
	core.Store
	waits chan time.Duration
}

func (s *retryWaits) Retry(ctx context.Context, d core.Delivery, consumer string, wait time.Duration) error {
	select {
	case s.waits <- wait:
	default:
	}
	return s.Store.Retry(ctx, d, consumer, wait)
}

// busyErr is a platform's 5xx that named a wait: of unknown outcome,
// as the adapters' (Discord's serverBusy, Teams' APIError) are.
type busyErr struct{ after time.Duration }

func (e busyErr) Error() string            { return "503 Service Unavailable" }
func (e busyErr) RetryWait() time.Duration { return e.after }

// busyCourier answers every post with err.
type busyCourier struct {
	slackCourier
	err error
}

func (c *busyCourier) Post(context.Context, *core.Question, core.MessageRef) (core.MessageRef, error) {
	return core.MessageRef{}, c.err
}

// TestAFailureThatNamesAWaitIsRetriedNoSooner: a platform that fails a
// post with a 5xx and a Retry-After is not asked again before that wait
// is over, while one that names nothing gets the back-off, and a named
// wait of hours is bounded. Before, every failure of unknown outcome got
// the back-off alone (2 s, doubling), and Discord's and Teams' named waits
// were read and dropped.
func TestAFailureThatNamesAWaitIsRetriedNoSooner(t *testing.T) {
	for name, tc := range map[string]struct {
		err      error
		min, max time.Duration
	}{
		"a named wait":         {busyErr{90 * time.Second}, 90 * time.Second, 90 * time.Second},
		"a wait of hours":      {busyErr{6 * time.Hour}, 10 * time.Minute, 10 * time.Minute},
		"shorter than backoff": {busyErr{time.Millisecond}, time.Second, time.Second},
		"no wait named":        {errors.New("connection reset"), time.Second, time.Second},
		// A refusal's retry-after (a 429) is no failed attempt, but its
		// wait is bounded the same way: before, a platform or webhook
		// receiver naming two days parked the card for two days, past
		// most questions' deadlines, where the age bound then dropped it.
		"a refusal naming a wait":  {&core.RetryAfter{After: 90 * time.Second}, 90 * time.Second, 90 * time.Second},
		"a refusal naming days":    {&core.RetryAfter{After: 48 * time.Hour}, 10 * time.Minute, 10 * time.Minute},
		"a refusal naming no wait": {&core.RetryAfter{}, time.Second, time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			st := &retryWaits{Store: coretest.OpenStore(t), waits: make(chan time.Duration, 1)}
			svc := coretest.Service(t, st, coretest.Options{Routes: map[string]core.Route{"ops": {
				Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}}, Deciders: map[core.Surface][]string{core.SurfaceSlack: {"U1"}},
			}}})
			startDrain(t, svc, &busyCourier{err: tc.err}, loops.DeliverOptions{Consumer: "c1", Block: 20 * time.Millisecond,
				MaxAttempts: 8, RetryWait: time.Second})
			askOps(t, svc, "toolu_1")
			if got := within(t, st.waits, "the failed post was never handed back"); got < tc.min || got > tc.max {
				t.Fatalf("retried after %s, want %s to %s", got, tc.min, tc.max)
			}
		})
	}
}

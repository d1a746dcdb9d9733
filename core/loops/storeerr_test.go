package loops_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/store/bolt"
)

// marksDown is the embedded store whose posting marks (Values.Lease) fail
// while failing is above zero, one failure a call: the shard holding
// them is failing over.
type marksDown struct {
	*bolt.Store
	failing atomic.Int32
}

func (s *marksDown) Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	if strings.HasPrefix(key, "posting:") && s.failing.Add(-1) >= 0 {
		return false, errors.New("CLUSTERDOWN the cluster is down")
	}
	return s.Store.Lease(ctx, key, owner, ttl)
}

// postCourier posts into a log, or fails every post with err when set.
type postCourier struct {
	slackCourier
	err   error
	posts atomic.Int32
	sent  chan struct{}
}

func (c *postCourier) Post(_ context.Context, q *core.Question, card core.MessageRef) (core.MessageRef, error) {
	c.posts.Add(1)
	if c.err != nil {
		return core.MessageRef{}, c.err
	}
	card.ID = "m-" + string(q.ID)
	close(c.sent)
	return card, nil
}

func onSlackC1(t *testing.T, st core.Store) *core.Service {
	return coretest.Service(t, st, coretest.Options{Routes: map[string]core.Route{"ops": {
		Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}}, Deciders: map[core.Surface][]string{core.SurfaceSlack: {"U1"}},
	}}})
}

func undelivered(t *testing.T, svc *core.Service, id core.QuestionID) *core.Event {
	for _, e := range coretest.EventsOf(t, svc, id) {
		if e.Kind == core.EventUndelivered {
			return &e
		}
	}
	return nil
}

// TestStoreErrorUsesNoAttempt: a delivery whose posting mark the store
// cannot take, more times than MaxAttempts, is retried without counting
// those as attempts, and posted once the store answers. Before, each
// failure counted, and the card was given up with an undelivered event
// though the platform was never tried.
func TestStoreErrorUsesNoAttempt(t *testing.T) {
	st := &marksDown{Store: coretest.OpenStore(t)}
	st.failing.Store(5)
	svc := onSlackC1(t, st)
	c := &postCourier{sent: make(chan struct{})}
	q := askOps(t, svc, "toolu_1")
	startDrain(t, svc, c, loops.DeliverOptions{Consumer: "c1", Block: 20 * time.Millisecond, RetryWait: time.Millisecond, MaxAttempts: 2})
	waitFor(t, "the post or the drop", func() bool {
		select {
		case <-c.sent:
			return true
		default:
			return undelivered(t, svc, q.ID) != nil
		}
	})
	if e := undelivered(t, svc, q.ID); e != nil {
		t.Fatalf("the card was given up after the store's own errors, the platform never tried: %+v", e)
	}
	if n := c.posts.Load(); n != 1 {
		t.Fatalf("%d posts, want 1", n)
	}
}

// TestStoreErrorEndsWithAge: a store that never takes the posting mark
// does not keep the delivery for ever: once older than RateLimitedFor it
// is dropped with an undelivered event, not before.
func TestStoreErrorEndsWithAge(t *testing.T) {
	const limit = 300 * time.Millisecond
	st := &marksDown{Store: coretest.OpenStore(t)}
	st.failing.Store(1 << 30)
	svc := onSlackC1(t, st)
	c := &postCourier{sent: make(chan struct{})}
	q := askOps(t, svc, "toolu_1")
	startDrain(t, svc, c, loops.DeliverOptions{Consumer: "c1", Block: 20 * time.Millisecond, RetryWait: time.Millisecond,
		MaxAttempts: 1, RateLimitedFor: limit})
	var e *core.Event
	waitFor(t, "the undelivered event", func() bool { e = undelivered(t, svc, q.ID); return e != nil })
	if age := e.At.Sub(q.CreatedAt); age < limit {
		t.Fatalf("dropped at %v old; want it retried until it was %v old", age, limit)
	}
	if n := c.posts.Load(); n != 0 {
		t.Fatalf("%d posts with the store down, want none", n)
	}
}

// TestPlatformErrorCounts: a platform's own error still counts as an
// attempt: the card is given up after MaxAttempts posts.
func TestPlatformErrorCounts(t *testing.T) {
	svc := onSlackC1(t, coretest.OpenStore(t))
	c := &postCourier{err: errors.New("500 Internal Server Error"), sent: make(chan struct{})}
	q := askOps(t, svc, "toolu_1")
	startDrain(t, svc, c, loops.DeliverOptions{Consumer: "c1", Block: 20 * time.Millisecond, RetryWait: time.Millisecond, MaxAttempts: 3})
	waitFor(t, "the undelivered event", func() bool { return undelivered(t, svc, q.ID) != nil })
	if n := c.posts.Load(); n != 3 {
		t.Fatalf("%d posts before the card was given up, want MaxAttempts (3)", n)
	}
}

package loops_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/store/bolt"
)

// lapsedRenewals is the embedded store where, once armed, the drain's
// next claim finds its own claims idle past MinIdle, as a Redis that
// was away longer than that finds them when it comes back: the
// drain's claim reaches it before the heartbeat's renewal, and the
// store hands the consumer's own deliveries out to it again. It tells
// reclaimed how many came.
type lapsedRenewals struct {
	*bolt.Store
	armed     atomic.Bool
	reclaimed chan int
}

func (s *lapsedRenewals) Claim(ctx context.Context, surface core.Surface, consumer string, n int, minIdle, block time.Duration) ([]core.Delivery, error) {
	if !s.armed.CompareAndSwap(true, false) {
		return s.Store.Claim(ctx, surface, consumer, n, minIdle, block)
	}
	ds, err := s.Store.Claim(ctx, surface, consumer, n, 0, 0)
	s.reclaimed <- len(ds)
	return ds, err
}

// remindLog is a stuckCourier that logs the reminders it sends.
type remindLog struct {
	*stuckCourier
	mu     sync.Mutex
	remind []core.QuestionID
}

func (c *remindLog) Remind(_ context.Context, q *core.Question, _ string) error {
	c.mu.Lock()
	c.remind = append(c.remind, q.ID)
	c.mu.Unlock()
	return nil
}

func (c *remindLog) reminders() []core.QuestionID {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.remind)
}

// TestOwnClaimsHandedOutAgainAreNotSentTwice: a drain whose claims the
// store hands out to it again while it still holds them (its renewals
// lapsed past MinIdle while the store was away, and its claim reached
// the store first when it came back) sends each once. Before, each was
// queued in its room a second time under the same id and sent twice: a
// reminder reached the room twice, unflagged (law 4).
func TestOwnClaimsHandedOutAgainAreNotSentTwice(t *testing.T) {
	st := &lapsedRenewals{Store: coretest.OpenStore(t), reclaimed: make(chan int, 1)}
	svc := onSlackC1(t, st)
	c := &remindLog{stuckCourier: newStuckCourier("C1")}
	q := askOps(t, svc, "toolu_1")
	if err := st.Enqueue(t.Context(), []core.Delivery{{Key: string(q.ID) + "/remind1", Kind: core.DeliverRemind,
		Surface: core.SurfaceSlack, Room: "C1", QuestionID: q.ID, CreatedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	startDrain(t, svc, c, loops.DeliverOptions{Consumer: "c1", Block: 20 * time.Millisecond})
	within(t, c.entered, "the card's post never went out")

	// The post hangs, the reminder waits behind it; the store hands both
	// out to c1 again.
	st.armed.Store(true)
	if n := within(t, st.reclaimed, "the drain never claimed again"); n != 2 {
		t.Fatalf("the store handed %d of c1's claims out to it again; want its 2", n)
	}
	// A card asked now goes into C1 behind whatever c1 holds there.
	marker := askOps(t, svc, "toolu_2").ID
	close(c.release)
	waitFor(t, "the card asked after the claims came back", func() bool { return slices.Contains(c.posts("C1"), marker) })
	if got := c.reminders(); !slices.Equal(got, []core.QuestionID{q.ID}) {
		t.Fatalf("reminders sent %v; want the one of %s, once", got, q.ID)
	}
}

package loops_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/store/bolt"
)

// extendCount is the embedded store counting the drain's renewals as
// they begin, so a test knows when one began after a change it made.
type extendCount struct {
	*bolt.Store
	extends atomic.Int32
}

func (s *extendCount) Extend(ctx context.Context, surface core.Surface, consumer string, ids []string) ([]string, error) {
	s.extends.Add(1)
	return s.Store.Extend(ctx, surface, consumer, ids)
}

// TestTakenOverClaimsAreNotSent: a drain held up past MinIdle (its room's
// first post hanging, as a GC pause or a stopped VM would hold it) whose
// claims another consumer took over and sent does not send them once it
// goes on: its renewal hears they are lost, drops them from the room's
// queue, and logs that once, with the count. Before, Extend's answer said
// nothing of them and the drain posted them after the hang, a second
// copy of each, unflagged (law 4).
func TestTakenOverClaimsAreNotSent(t *testing.T) {
	st := &extendCount{Store: coretest.OpenStore(t)}
	svc := onSlackC1(t, st)
	c := newStuckCourier("C1")
	var (
		mu     sync.Mutex
		logged []string
	)
	onError := func(_ core.Delivery, err error) {
		mu.Lock()
		logged = append(logged, err.Error())
		mu.Unlock()
	}
	var qs []core.QuestionID
	for _, call := range []string{"toolu_1", "toolu_2", "toolu_3"} {
		qs = append(qs, askOps(t, svc, call).ID)
	}
	startDrain(t, svc, c, loops.DeliverOptions{Consumer: "c1", Block: 20 * time.Millisecond,
		MinIdle: 300 * time.Millisecond, OnError: onError})
	within(t, c.entered, "the first post never went out")

	// Another replica, taking c1 for dead, takes its claims over and
	// sends them (its acks stand for the sends).
	ctx := t.Context()
	taken, err := st.Store.Claim(ctx, core.SurfaceSlack, "c2", 10, 0, 0)
	if err != nil || len(taken) != len(qs) {
		t.Fatalf("take-over by c2: %+v, %v; want %d deliveries", taken, err, len(qs))
	}
	for _, d := range taken {
		if err := st.Store.Ack(ctx, core.SurfaceSlack, d.ID); err != nil {
			t.Fatal(err)
		}
	}
	// The heartbeat's next renewal begins after the take-over; once the
	// one after it begins, the first has had its answer and acted on it.
	begun := st.extends.Load()
	waitFor(t, "two renewals after the take-over", func() bool { return st.extends.Load() >= begun+2 })

	// A card asked now goes into C1 behind whatever c1 still holds there.
	marker := askOps(t, svc, "toolu_4").ID
	close(c.release)
	waitFor(t, "the card asked after the take-over", func() bool { return slices.Contains(c.posts("C1"), marker) })
	if got, want := c.posts("C1"), []core.QuestionID{qs[0], marker}; !slices.Equal(got, want) {
		t.Fatalf("C1 got %v; want %v: the cards another consumer took over were posted again", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	var lost []string
	for _, l := range logged {
		if strings.Contains(l, "taken over") {
			lost = append(lost, l)
		}
	}
	if len(lost) != 1 || !strings.Contains(lost[0], "2 claimed deliveries") {
		t.Fatalf("logged %q; want one report of the 2 deliveries dropped", logged)
	}
}

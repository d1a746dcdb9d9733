package loops_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/store/bolt"
)

// hungRetries is the embedded store whose hand-backs never come back:
// each waits until its caller gives up, as a call to a Redis that has
// stopped answering does. It counts the deliveries claimed.
type hungRetries struct {
	*bolt.Store
	claimed atomic.Int32
}

func (s *hungRetries) Claim(ctx context.Context, surface core.Surface, consumer string, n int, minIdle, block time.Duration) ([]core.Delivery, error) {
	ds, err := s.Store.Claim(ctx, surface, consumer, n, minIdle, block)
	s.claimed.Add(int32(len(ds)))
	return ds, err
}

func (s *hungRetries) Retry(ctx context.Context, _ core.Delivery, _ string, _ time.Duration) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestAStopHandsBackWithinOneDeadline: a drain stopped while it holds a
// room's twelve deliveries, on a store that no longer answers, returns
// within one deadline for all its hand-backs, and reports once how many
// it could not hand back (they stay claimed until another replica takes
// them over after MinIdle). Before, each hand-back waited its own five
// seconds, one after another: a minute for these twelve, two and a half
// for thirty, past any orchestrator's grace period.
//
// It runs in a synctest bubble, so the store's hang passes on the
// bubble's clock, at once.
func TestAStopHandsBackWithinOneDeadline(t *testing.T) {
	synctest.Test(t, aStopHandsBackWithinOneDeadline)
}

func aStopHandsBackWithinOneDeadline(t *testing.T) {
	st := &hungRetries{Store: coretest.OpenStore(t)}
	svc := onSlackC1(t, st)
	const held = 12
	for i := range held {
		askOps(t, svc, fmt.Sprintf("toolu_%d", i))
	}
	c := &stopCourier{entered: make(chan struct{}), sent: make(chan core.MessageRef, 1)}
	var (
		mu     sync.Mutex
		logged []string
	)
	o := loops.DeliverOptions{Consumer: "c1", Block: 50 * time.Millisecond, OnError: func(_ core.Delivery, err error) {
		mu.Lock()
		logged = append(logged, err.Error())
		mu.Unlock()
	}}
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = loops.Deliver(ctx, svc, c, o) }()
	<-c.entered
	synctest.Wait() // the room's first post hangs; the drain has claimed the rest
	if n := st.claimed.Load(); n != held {
		t.Fatalf("the drain claimed %d deliveries before the stop; want %d", n, held)
	}

	began := time.Now()
	stop()
	<-done
	if took := time.Since(began); took > 10*time.Second {
		t.Fatalf("the stop took %s on a store that does not answer; want it bounded, whatever the deliveries held", took)
	}
	mu.Lock()
	defer mu.Unlock()
	var missed []string
	for _, l := range logged {
		if strings.Contains(l, "not handed back") {
			missed = append(missed, l)
		}
	}
	if want := fmt.Sprintf("%d claimed deliveries", held); len(missed) != 1 || !strings.Contains(missed[0], want) {
		t.Fatalf("logged %q; want one report of the %d deliveries not handed back", logged, held)
	}
}

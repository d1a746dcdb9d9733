package loops_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

// lateRenewal is the store's leases, where a's first renewal ends a's
// work as it goes out and reaches the store a little later, as a
// command already sent does whether or not its caller still waits.
type lateRenewal struct {
	loops.Leases
	aCalls   atomic.Int32
	workEnds chan struct{}
	landed   chan struct{} // closed once the late renewal has reached the store
}

func (s *lateRenewal) Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	if owner == "a" && s.aCalls.Add(1) == 2 {
		close(s.workEnds)
		defer close(s.landed)
		time.Sleep(100 * time.Millisecond) // the store's latency, on the bubble's clock: the call is on its way
		return s.Leases.Lease(context.WithoutCancel(ctx), key, owner, ttl)
	}
	return s.Leases.Lease(ctx, key, owner, ttl)
}

// TestLeadGivesUpAfterARenewalStillOut: a leader whose work ends while a
// renewal is out gives the lease up after that renewal has come back,
// so another replica may take it at once. Before, the release went
// first and the renewal landing after it took the lease back, with
// nothing running under it, keeping every other replica from the work
// for a TTL, after which the same replica took its own lease again.
//
// It runs in a synctest bubble, so the renewal's latency and the lease's
// times pass on the bubble's clock, at once.
func TestLeadGivesUpAfterARenewalStillOut(t *testing.T) {
	synctest.Test(t, leadGivesUpAfterARenewalStillOut)
}

func leadGivesUpAfterARenewalStillOut(t *testing.T) {
	const key = "loops-test:late"
	st := &lateRenewal{Leases: coretest.OpenStore(t), workEnds: make(chan struct{}), landed: make(chan struct{})}
	ctx, stop := context.WithCancel(t.Context())
	ran := make(chan struct{})
	gaveUp := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		first := true
		leadQuietly(ctx, st, key, "a", 2*time.Second, func(ctx context.Context) {
			if first {
				first = false
				close(ran)
				<-st.workEnds
			}
		}, func(held bool) {
			if !held {
				select {
				case gaveUp <- struct{}{}:
				default:
				}
			}
		})
	}()
	defer func() { stop(); <-done }()
	within(t, ran, "a never led")
	within(t, gaveUp, "a never gave the lease up when its work ended")
	within(t, st.landed, "the renewal that was out never landed")
	if ok, err := st.Leases.Lease(t.Context(), key, "b", time.Second); err != nil || !ok {
		t.Fatalf("b's try for the lease a gave up: %v, %v; want it taken", ok, err)
	}
}

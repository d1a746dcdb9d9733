package telegram

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/internal/logbuf"
	"github.com/rs/zerolog"
)

const keptKey = "telegram:1:update:77"

// gatedClaims is a store whose claims, once gated, wait for the gate to
// open, as a slow store's do; returned is set as one comes back.
type gatedClaims struct {
	core.Store
	gate     chan struct{}
	entered  chan struct{}
	gated    atomic.Bool
	returned atomic.Bool
}

func (s *gatedClaims) ClaimOnce(ctx context.Context, key, holder string, hold time.Duration) (core.OnceState, error) {
	if s.gated.CompareAndSwap(true, false) {
		close(s.entered)
		<-s.gate
		defer s.returned.Store(true)
	}
	return s.Store.ClaimOnce(ctx, key, holder, hold)
}

// keepTap claims keptKey for a tap on e's adapter, in webhook mode, and
// keeps the claim (keep) on the test's ticks (renewHook) until stop.
func (e *env) keepTap() (g core.Sighting, stop func(), tick chan time.Time, asked chan struct{}) {
	e.t.Helper()
	tick, asked = renewHook(e.a)
	g = e.svc.Sight(e.t.Context(), keptKey, tapHold, time.Hour)
	stop = e.a.keep(e.t.Context(), g)
	waitFor(e.t, asked, "the claim was never kept")
	return g, stop, tick, asked
}

// TestKeepStopsBeforeTheClaimIsSettled: stopping the renewals of a tap's
// claim waits for a renewal in flight, and none comes after it, so none
// takes the claim again once its handling released it (Unhandled): the
// tap's next copy is handled.
func TestKeepStopsBeforeTheClaimIsSettled(t *testing.T) {
	st := &gatedClaims{Store: coretest.OpenStore(t), gate: make(chan struct{}), entered: make(chan struct{})}
	e := newEnvOn(t, nil, st)
	ctx := t.Context()
	g, stop, tick, _ := e.keepTap()

	st.gated.Store(true)
	tick <- time.Time{}
	waitFor(t, st.entered, "the renewal never reached the store")
	stopped := make(chan bool)
	go func() { stop(); stopped <- st.returned.Load() }()
	close(st.gate)
	if !<-stopped {
		t.Error("stop returned while a renewal was in flight")
	}
	select {
	case tick <- time.Time{}:
		t.Error("the claim was renewed after its keeping stopped")
	default:
	}
	g.Unhandled(ctx)
	if next := e.svc.Sight(ctx, keptKey, tapHold, time.Hour); !next.First() {
		t.Errorf("a copy after the claim was released: %v, want it handled", next.State)
	}
}

// TestKeepRenewalFailures: a renewal the store fails is logged and tried
// again at the next tick, which keeps the claim; a claim lost for good,
// lapsed and taken by another handling, is logged and renewed no more,
// and the other handling's claim is left to it.
func TestKeepRenewalFailures(t *testing.T) {
	now, ahead := skewed()
	st := &dyingClaims{Store: coretest.OpenStoreOn(t, now)}
	e := newEnvOn(t, nil, st)
	logs := &logbuf.Buffer{}
	e.a.log = zerolog.New(logs)
	ctx := t.Context()
	_, stop, tick, asked := e.keepTap()

	st.dead.Store(true)
	tick <- time.Time{}
	waitFor(t, asked, "the keeping ended on a renewal the store failed")
	if n := len(logs.Lines("could not be renewed")); n != 1 {
		t.Errorf("a renewal the store failed was logged %d times, want once:\n%s", n, logs)
	}
	st.dead.Store(false)
	ahead.Advance(tapHold - time.Second)
	tick <- time.Time{}
	waitFor(t, asked, "the keeping ended on a renewal")
	ahead.Advance(tapHold - time.Second) // past the first hold
	if dup := e.svc.Sight(ctx, keptKey, tapHold, time.Hour); dup.State != core.OnceHeld {
		t.Fatalf("a copy after the renewal that followed a failed one: %v, want held", dup.State)
	}

	ahead.Advance(tapHold + time.Second) // renewed no more meanwhile
	other := e.svc.Sight(ctx, keptKey, tapHold, time.Hour)
	if !other.First() {
		t.Fatalf("a copy once the claim lapsed: %v, want it handled", other.State)
	}
	tick <- time.Time{}
	stop()
	if n := len(asked); n != 0 {
		t.Errorf("the keeping waited for %d more renewals of a claim another handling took", n)
	}
	if n := len(logs.Lines("taken by another handling")); n != 1 {
		t.Errorf("the lost claim was logged %d times, want once:\n%s", n, logs)
	}
	if dup := e.svc.Sight(ctx, keptKey, tapHold, time.Hour); dup.State != core.OnceHeld {
		t.Errorf("the other handling's claim after the lost one's renewal: %v, want held", dup.State)
	}
}

// TestPollingTapClaimIsNotRenewed: while polling, a tap's claim lasts
// seenHold as before, and nothing renews it: a dead poller's tap has its
// tapper answered by the next poller (answerHeld).
func TestPollingTapClaimIsNotRenewed(t *testing.T) {
	e := newEnv(t, newMemKV())
	_, asked := renewHook(e.a)
	if d := e.a.tapClaim(); d != seenHold {
		t.Errorf("a polled tap's claim lasts %s, want %s", d, seenHold)
	}
	g := e.svc.Sight(t.Context(), keptKey, seenHold, time.Hour)
	e.a.keep(t.Context(), g)()
	if n := len(asked); n != 0 {
		t.Errorf("a polled tap's claim was kept (%d waits for a renewal)", n)
	}
}

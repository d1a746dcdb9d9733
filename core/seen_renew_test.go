package core_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// renewStore counts the claims asked of a store, and fails them while
// fail is set, as a store failing over does.
type renewStore struct {
	core.Store
	fail   atomic.Bool
	claims atomic.Int64
}

func (s *renewStore) ClaimOnce(ctx context.Context, key, holder string, hold time.Duration) (core.OnceState, error) {
	s.claims.Add(1)
	if s.fail.Load() {
		return 0, core.Internal("claim once", errors.New("renewStore: the store is failing over"))
	}
	return s.Store.ClaimOnce(ctx, key, holder, hold)
}

// renewEnv is a service over a store whose clock moves only when told.
func renewEnv(t *testing.T) (*core.Service, *renewStore, *core.SimClock) {
	t.Helper()
	clock := core.NewSimClock(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	st := &renewStore{Store: coretest.OpenStoreOn(t, clock.Now)}
	return coretest.Service(t, st, coretest.Options{}), st, clock
}

const renewHold = 5 * time.Second

// TestSightingRenewKeepsAShortClaim: a claim renewed while its handling
// runs outlasts its first hold, so a copy of the event is not handled
// beside it; one renewed no more (its holder died) lapses a hold after
// its last renewal, and the copy then is. The holder that lost it so is
// told, for good: its renewal takes nothing back from the new holder, and
// its confirmation leaves the new holder's claim alone.
func TestSightingRenewKeepsAShortClaim(t *testing.T) {
	svc, _, clock := renewEnv(t)
	ctx := t.Context()
	const key = "door:event:1"
	g := svc.Sight(ctx, key, renewHold, time.Hour)
	if !g.First() {
		t.Fatalf("the first sight: %v", g.State)
	}
	clock.Advance(4 * time.Second)
	if st, err := g.Renew(ctx); err != nil || st != core.OnceClaimed {
		t.Fatalf("a renewal within the hold: %v, %v; want claimed", st, err)
	}
	clock.Advance(4 * time.Second) // past the first hold, within the renewed one
	if dup := svc.Sight(ctx, key, renewHold, time.Hour); dup.State != core.OnceHeld {
		t.Fatalf("a copy past the first hold of a renewed claim: %v, want held", dup.State)
	}

	clock.Advance(renewHold + time.Second) // renewed no more: its holder died
	next := svc.Sight(ctx, key, renewHold, time.Hour)
	if !next.First() {
		t.Fatalf("a copy past the hold of a claim renewed no more: %v, want claimed", next.State)
	}
	if st, err := g.Renew(ctx); err != nil || st != core.OnceHeld {
		t.Fatalf("the old holder's renewal after another took the event: %v, %v; want held", st, err)
	}
	g.Handled(ctx)
	if dup := svc.Sight(ctx, key, renewHold, time.Hour); dup.State != core.OnceHeld {
		t.Fatalf("after the old holder's confirmation: %v, want the new holder's claim", dup.State)
	}
	next.Handled(ctx)
	if st, err := g.Renew(ctx); err != nil || st != core.OnceDone {
		t.Fatalf("the old holder's renewal once the event was handled: %v, %v; want done", st, err)
	}
	if st, err := next.Renew(ctx); err != nil || st != core.OnceDone {
		t.Fatalf("a renewal after its own confirmation: %v, %v; want done", st, err)
	}
}

// TestSightingRenewOfALapsedClaimNobodyTook: a claim that lapsed before
// its renewal came, with no copy of the event taken meanwhile, is its
// holder's again.
func TestSightingRenewOfALapsedClaimNobodyTook(t *testing.T) {
	svc, _, clock := renewEnv(t)
	ctx := t.Context()
	g := svc.Sight(ctx, "door:event:2", renewHold, time.Hour)
	clock.Advance(2 * renewHold)
	if st, err := g.Renew(ctx); err != nil || st != core.OnceClaimed {
		t.Fatalf("a late renewal: %v, %v; want claimed", st, err)
	}
	if dup := svc.Sight(ctx, "door:event:2", renewHold, time.Hour); dup.State != core.OnceHeld {
		t.Fatalf("a copy after the late renewal: %v, want held", dup.State)
	}
}

// TestSightingRenewTheStoreFails: a renewal the store fails is reported
// as an error, not as the claim kept or lost: the claim lasts until its
// hold passes, and a renewal once the store answers again keeps it.
func TestSightingRenewTheStoreFails(t *testing.T) {
	svc, st, clock := renewEnv(t)
	ctx := t.Context()
	const key = "door:event:3"
	g := svc.Sight(ctx, key, renewHold, time.Hour)
	st.fail.Store(true)
	if s, err := g.Renew(ctx); err == nil {
		t.Fatalf("a renewal the store failed: %v, no error", s)
	}
	st.fail.Store(false)
	clock.Advance(4 * time.Second)
	if dup := svc.Sight(ctx, key, renewHold, time.Hour); dup.State != core.OnceHeld {
		t.Fatalf("within the hold after a failed renewal: %v, want held", dup.State)
	}
	if s, err := g.Renew(ctx); err != nil || s != core.OnceClaimed {
		t.Fatalf("a renewal once the store answers: %v, %v; want claimed", s, err)
	}
	clock.Advance(4 * time.Second)
	if dup := svc.Sight(ctx, key, renewHold, time.Hour); dup.State != core.OnceHeld {
		t.Fatalf("past the first hold after the renewal: %v, want held", dup.State)
	}
}

// TestSightingRenewOfNoClaim: a sighting that holds nothing, because
// another handling has the event or it was handled, or because its door
// claims nothing, reports its state and asks the store nothing: a
// renewal would take a key that is not its holder's to take.
func TestSightingRenewOfNoClaim(t *testing.T) {
	svc, st, _ := renewEnv(t)
	ctx := t.Context()
	g := svc.Sight(ctx, "door:event:4", renewHold, time.Hour)
	held := svc.Sight(ctx, "door:event:4", renewHold, time.Hour)
	g.Handled(ctx)
	done := svc.Sight(ctx, "door:event:4", renewHold, time.Hour)
	before := st.claims.Load()
	for _, c := range []struct {
		g    core.Sighting
		want core.OnceState
	}{
		{held, core.OnceHeld},
		{done, core.OnceDone},
		{core.Sighting{State: core.OnceClaimed}, core.OnceClaimed},
	} {
		if s, err := c.g.Renew(ctx); err != nil || s != c.want {
			t.Errorf("renewal of a sighting that found %v: %v, %v", c.g.State, s, err)
		}
	}
	if n := st.claims.Load() - before; n != 0 {
		t.Errorf("renewals of sightings that hold nothing asked the store %d claims", n)
	}
}

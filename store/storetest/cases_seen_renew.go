package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

func init() {
	register("SeenClaimAgainMovesItsEnd", testSeenRenew)
}

// testSeenRenew: a holder's claim again, before its hold passes
// (core.Sighting.Renew), moves the claim's end to the hold from then:
// past the first end another holder's claim, from any replica, is still
// refused, and once the moved end passes it is taken. A store that kept
// the first end would hand a long handling's event to a second holder
// while the first still handles it.
//
// Holds run on the store's own clock, as testSeenLapse's do (Redis'
// cannot be moved), so witness keys, claimed for the same hold beside
// the event's, tell when its ends pass: one claimed just before a claim
// lapses no later than it, one claimed just after no sooner. A round
// whose order the witnesses cannot vouch for (a slow machine renewed
// after the first end, or asked after the moved one) proves nothing
// either way, and runs again with a longer hold.
func testSeenRenew(t *testing.T, h Harness) {
	e := newEnv(t, h)
	other := e.store
	if h.Replica != nil {
		other = h.Replica(t, e.store)
	}
	for n, hold := 0, 50*time.Millisecond; ; n, hold = n+1, 2*hold {
		if renewRound(t, e.store, other, n, hold) {
			return
		}
		if hold > 5*time.Second {
			t.Fatalf("no round could order its claims within a hold of %s", hold)
		}
	}
}

// renewRound runs one round with claims of hold, on keys of round n;
// it reports whether the witnesses vouched for its order.
func renewRound(t *testing.T, s, other core.Store, n int, hold time.Duration) bool {
	t.Helper()
	ctx := t.Context()
	key := func(name string) string { return fmt.Sprintf("seen:renew:%d:%s", n, name) }
	claim := func(s core.Store, key, who string, hold time.Duration) core.OnceState {
		t.Helper()
		st, err := s.ClaimOnce(ctx, key, who, hold)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	witness := func(name string, hold time.Duration) string {
		t.Helper()
		w := key(name)
		if st := claim(s, w, "clock", hold); st != core.OnceClaimed {
			t.Fatalf("witness %s: %v", w, st)
		}
		return w
	}
	// live reports whether witness w still holds; a lapsed one is the
	// probe's then, and witnesses nothing more.
	live := func(w string) bool { return claim(s, w, "probe", time.Hour) == core.OnceHeld }
	// lapse waits, bounded, for witness w's hold to pass.
	lapse := func(w string) {
		t.Helper()
		deadline := time.Now().Add(10*time.Second + hold)
		for live(w) {
			if time.Now().After(deadline) {
				t.Fatalf("witness %s never lapsed", w)
			}
		}
	}
	event := key("event")

	before0 := witness("before0", hold)
	if st := claim(s, event, "a", hold); st != core.OnceClaimed {
		t.Fatalf("the first claim: %v", st)
	}
	after0 := witness("after0", hold)
	lapse(witness("half", hold/2)) // the first hold half spent
	before1 := witness("before1", hold)
	if st := claim(s, event, "a", hold); st != core.OnceClaimed {
		t.Fatalf("the holder's claim again: %v, want claimed", st)
	}
	after1 := witness("after1", hold)
	if !live(before0) {
		return false // the first end may have passed before the claim again
	}

	lapse(after0) // the first end has passed
	st := claim(other, event, "b", hold)
	if !live(before1) {
		return false // the moved end may have passed too
	}
	if st != core.OnceHeld {
		t.Fatalf("another holder's claim past the first end, before the moved one: %v, want held", st)
	}

	lapse(after1) // the moved end has passed
	if st := claim(other, event, "b", hold); st != core.OnceClaimed {
		t.Fatalf("another holder's claim past the moved end: %v, want claimed", st)
	}
	return true
}

package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

func init() {
	register("SeenIsClaimedThenConfirmed", testSeenClaims)
}

// testSeenClaims: an inbound event's key is claimed while its handling
// runs and marked done only once it ends (core.Service.Sight). Of
// replicas that race for a claim one holds it and the others are told it
// is held; a confirmed key is done for every replica, across a restart;
// a released claim, and one whose holder died, lets the event's next
// delivery be handled; a confirmation never takes another holder's
// claim, nor a release a key done.
func testSeenClaims(t *testing.T, h Harness) {
	e := newEnv(t, h)
	ctx := t.Context()
	stores := []core.Store{e.store}
	if h.Replica != nil {
		stores = append(stores, h.Replica(t, e.store))
	}
	const key = "seen:telegram:1:update:7"

	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[core.OnceState][]string{}
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			holder := fmt.Sprintf("holder-%d", i)
			st, err := stores[i%len(stores)].ClaimOnce(ctx, key, holder, time.Hour)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			got[st] = append(got[st], holder)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(got[core.OnceClaimed]) != 1 || len(got[core.OnceHeld]) != 9 {
		t.Fatalf("claims %v, want one claimed and nine held", got)
	}
	holder := got[core.OnceClaimed][0]
	claim := func(s core.Store, who string) core.OnceState {
		t.Helper()
		st, err := s.ClaimOnce(ctx, key, who, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	// The holder's own call again (a reply lost and the call sent again)
	// is still its claim.
	if st := claim(e.store, holder); st != core.OnceClaimed {
		t.Fatalf("the holder's claim again: %v", st)
	}
	// A claim is taken, for Once too; and neither a release nor a
	// confirmation by another changes it.
	if ok, err := e.store.Once(ctx, key, time.Hour); err != nil || ok {
		t.Fatalf("Once on a claimed key: %v, %v", ok, err)
	}
	if err := e.store.ReleaseOnce(ctx, key, "someone-else"); err != nil {
		t.Fatal(err)
	}
	if err := e.store.ConfirmOnce(ctx, key, "someone-else", time.Hour); err != nil {
		t.Fatal(err)
	}
	if st := claim(stores[len(stores)-1], "someone-else"); st != core.OnceHeld {
		t.Fatalf("after another's release and confirmation: %v, want held", st)
	}

	// Confirmed, the key is done for every replica, across a restart, and
	// the holder's release comes too late to undo it.
	if err := e.store.ConfirmOnce(ctx, key, holder, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := e.store.ReleaseOnce(ctx, key, holder); err != nil {
		t.Fatal(err)
	}
	for i, s := range stores {
		if st := claim(s, "late"); st != core.OnceDone {
			t.Fatalf("store %d after the confirmation: %v, want done", i, st)
		}
	}
	e.restart()
	if st := claim(e.store, holder); st != core.OnceDone {
		t.Fatalf("after a restart: %v, want done (even for its holder)", st)
	}

	// Released, a claim lets the next delivery be handled.
	if st, err := e.store.ClaimOnce(ctx, "seen:x", "a", time.Hour); err != nil || st != core.OnceClaimed {
		t.Fatalf("a new key: %v, %v", st, err)
	}
	if err := e.store.ReleaseOnce(ctx, "seen:x", "a"); err != nil {
		t.Fatal(err)
	}
	if st, err := e.store.ClaimOnce(ctx, "seen:x", "b", time.Hour); err != nil || st != core.OnceClaimed {
		t.Fatalf("after its holder released it: %v, %v; want claimed", st, err)
	}

	// A key Once took reads as done.
	if ok, err := e.store.Once(ctx, "seen:old", time.Hour); err != nil || !ok {
		t.Fatalf("Once: %v, %v", ok, err)
	}
	if st, err := e.store.ClaimOnce(ctx, "seen:old", "a", time.Hour); err != nil || st != core.OnceDone {
		t.Fatalf("a key Once took: %v, %v; want done", st, err)
	}
	// A key never claimed (the store could not say when it was sighted)
	// is confirmed all the same.
	if err := e.store.ConfirmOnce(ctx, "seen:unclaimed", "a", time.Hour); err != nil {
		t.Fatal(err)
	}
	if st, err := e.store.ClaimOnce(ctx, "seen:unclaimed", "b", time.Hour); err != nil || st != core.OnceDone {
		t.Fatalf("a key confirmed unclaimed: %v, %v; want done", st, err)
	}
}

func init() {
	register("SeenClaimOfADeadHolderLapses", testSeenLapse)
}

// testSeenLapse: a claim whose holder died (a crash between claim and
// handling) lapses after its hold, on the store's own clock, and the
// event's next delivery is claimed; the dead holder's confirmation, if
// it comes after all, leaves the new holder's claim alone. A claim in
// hand survives Purge; times under a millisecond, and a claim or a
// confirmation that names no holder, are refused.
func testSeenLapse(t *testing.T, h Harness) {
	e := newEnv(t, h)
	ctx := t.Context()
	for _, d := range []time.Duration{0, -time.Second, time.Microsecond} {
		if st, err := e.store.ClaimOnce(ctx, "seen:short", "a", d); core.ErrorCode(err) != core.CodeInvalid || st == core.OnceClaimed {
			t.Errorf("claim for %s: %v, %v; want invalid", d, st, err)
		}
		if err := e.store.ConfirmOnce(ctx, "seen:short", "a", d); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("confirm for %s: %v; want invalid", d, err)
		}
	}
	// A claim or confirmation without its holder's name is refused, as a
	// done key's mark would otherwise read as that holder's claim.
	if st, err := e.store.ClaimOnce(ctx, "seen:short", "", time.Hour); core.ErrorCode(err) != core.CodeInvalid || st == core.OnceClaimed {
		t.Errorf("claim without a holder: %v, %v; want invalid", st, err)
	}
	if err := e.store.ConfirmOnce(ctx, "seen:short", "", time.Hour); core.ErrorCode(err) != core.CodeInvalid {
		t.Errorf("confirm without a holder: %v; want invalid", err)
	}
	if st, err := e.store.ClaimOnce(ctx, "seen:lapse", "dead", 20*time.Millisecond); err != nil || st != core.OnceClaimed {
		t.Fatalf("claim: %v, %v", st, err)
	}
	// Expiry runs on the store's own clock: wait for it, bounded.
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := e.store.ClaimOnce(ctx, "seen:lapse", "next", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if st == core.OnceClaimed {
			break
		}
		if st != core.OnceHeld {
			t.Fatalf("a lapsing claim read %v, want held until it lapses", st)
		}
		if time.Now().After(deadline) {
			t.Fatal("a dead holder's claim never lapsed")
		}
	}
	if err := e.store.ConfirmOnce(ctx, "seen:lapse", "dead", time.Hour); err != nil {
		t.Fatal(err)
	}
	if st, _ := e.store.ClaimOnce(ctx, "seen:lapse", "third", time.Hour); st != core.OnceHeld {
		t.Fatalf("after the dead holder's late confirmation: %v, want the new holder's claim", st)
	}
	if _, err := e.svc.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := e.store.ClaimOnce(ctx, "seen:lapse", "third", time.Hour); st != core.OnceHeld {
		t.Fatalf("after a purge: %v, want the claim in hand kept", st)
	}
}

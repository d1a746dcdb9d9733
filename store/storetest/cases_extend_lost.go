package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

func init() {
	register("ExtendReportsClaimsTakenOver", testExtendLost)
}

// testExtendLost: a consumer frozen past the idle limit (a GC pause, a
// stopped VM) has a claim taken over by another; its next renewal reports
// that claim lost, and only that one, so its drain does not send it too
// (law 4: the other consumer sends it, and a second copy would go out
// unflagged). A claim the other consumer has since acked is lost as well;
// the claims still its own are renewed, and reported lost to no one.
func testExtendLost(t *testing.T, h Harness) {
	e := newEnv(t, h)
	ctx := t.Context()
	e.enqueueOne("k-1")
	e.enqueueOne("k-2")
	mine, err := e.store.Claim(ctx, core.SurfaceSlack, "a", 10, time.Hour, 0)
	if err != nil || len(mine) != 2 {
		t.Fatalf("claim by a: %+v, %v; want two deliveries", mine, err)
	}
	ids := []string{mine[0].ID, mine[1].ID}

	// b takes over one of a's claims, as if a had idled past minIdle.
	taken, err := e.store.Claim(ctx, core.SurfaceSlack, "b", 1, 0, 0)
	if err != nil || len(taken) != 1 {
		t.Fatalf("take-over by b: %+v, %v; want one delivery", taken, err)
	}
	took := slices.IndexFunc(mine, func(d core.Delivery) bool { return d.Key == taken[0].Key })
	if took < 0 {
		t.Fatalf("b took %+v, none of a's claims %+v", taken[0], mine)
	}
	kept := mine[1-took].ID

	lost, err := e.store.Extend(ctx, core.SurfaceSlack, "a", ids)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{mine[took].ID}; !slices.Equal(lost, want) {
		t.Fatalf("a's renewal after b took %s over reported lost %q, want %q", taken[0].Key, lost, want)
	}
	lost, err = e.store.Extend(ctx, core.SurfaceSlack, "b", []string{taken[0].ID})
	if err != nil || len(lost) != 0 {
		t.Fatalf("b's renewal of its own claim reported lost %q, %v; want none", lost, err)
	}

	// b sends it and acks it: to a it stays lost.
	if err := e.store.Ack(ctx, core.SurfaceSlack, taken[0].ID); err != nil {
		t.Fatal(err)
	}
	lost, err = e.store.Extend(ctx, core.SurfaceSlack, "a", ids)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{mine[took].ID}; !slices.Equal(lost, want) {
		t.Fatalf("a's renewal after b acked %s reported lost %q, want %q", taken[0].Key, lost, want)
	}

	// a's other claim is still a's: renewed, not for the taking.
	e.claimNone("b", time.Hour)
	lost, err = e.store.Extend(ctx, core.SurfaceSlack, "a", []string{kept})
	if err != nil || len(lost) != 0 {
		t.Fatalf("a's renewal of the claim it kept reported lost %q, %v; want none", lost, err)
	}
}

package redis_test

import (
	"slices"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestReplayedClaimHandsOutItsDeliveries: a claim whose first run's
// reply was lost, and which go-redis therefore sent again, hands out
// what the first run claimed, as a first attempt; before, the resend
// found them in the consumer's pending list, not new, and handed out
// nothing, so they waited out the idle limit and were then reclaimed as
// a second attempt that was never made.
func TestReplayedClaimHandsOutItsDeliveries(t *testing.T) {
	p, a, b := replayed(t)
	drain(t, b, core.SurfaceSlack) // Redis has the claim script by then
	q := question(0, "run-1", t0)
	mustCreate(t, b, q, post(q, core.SurfaceSlack, "C1"))
	p.arm(redisstore.ClaimHash())
	ds, err := a.Claim(t.Context(), core.SurfaceSlack, "a", 10, time.Hour, 0)
	mustHaveCut(t, p)
	if err != nil || len(ds) != 1 || ds[0].QuestionID != q.ID || ds[0].Attempts != 1 {
		t.Fatalf("the replayed claim handed out %+v, %v; want %s's post, first attempt", ds, err, q.ID)
	}
	if err := a.Ack(t.Context(), core.SurfaceSlack, ds[0].ID); err != nil {
		t.Fatal(err)
	}
	// With no idle limit every pending delivery is taken over: none is.
	if left, err := b.Claim(t.Context(), core.SurfaceSlack, "b", 10, 0, 0); err != nil || len(left) != 0 {
		t.Fatalf("after its ack: %+v, %v; want nothing pending", left, err)
	}
}

// TestReplayedClaimLeavesATakenOverDelivery: a claim sent again after
// another consumer took its first run's delivery over hands it out no
// more: the resend gives back only what is still its consumer's, or the
// delivery would go out twice (law 4).
func TestReplayedClaimLeavesATakenOverDelivery(t *testing.T) {
	p, a, b := replayed(t)
	drain(t, b, core.SurfaceSlack) // Redis has the claim script by then
	q := question(0, "run-1", t0)
	mustCreate(t, b, q, post(q, core.SurfaceSlack, "C1"))
	taken := make(chan []core.Delivery, 1)
	p.meanwhile = func() {
		ds, err := b.Claim(t.Context(), core.SurfaceSlack, "b", 10, 0, 0) // no idle limit: takes a's over
		if err != nil {
			t.Error(err)
		}
		taken <- ds
	}
	p.arm(redisstore.ClaimHash())
	ds, err := a.Claim(t.Context(), core.SurfaceSlack, "a", 10, time.Hour, 0)
	mustHaveCut(t, p)
	if byB := <-taken; len(byB) != 1 || byB[0].QuestionID != q.ID {
		t.Fatalf("the takeover got %+v; want %s's post", byB, q.ID)
	}
	if err != nil || len(ds) != 0 {
		t.Fatalf("the replayed claim handed out %+v, %v; want nothing, b holds it", ds, err)
	}
}

// TestReplayedRenotifyAfterThreeOthersIsApplied: a renotice whose reply
// was lost is known as applied when sent again even if three other
// renotices of the question landed in between; before, only the last
// three renotices' attempts were kept, so the resend was applied again:
// a second count, event and post of one reminder.
func TestReplayedRenotifyAfterThreeOthersIsApplied(t *testing.T) {
	p, a, b := replayed(t)
	q := question(0, "run-1", t0)
	mustCreate(t, b, q)
	others := make(chan error, 3)
	p.meanwhile = func() {
		for range 3 {
			others <- b.Renotify(t.Context(), core.Renotice{QuestionID: q.ID, Count: true, Now: t0, Event: event(q, core.EventReminded, t0)})
		}
	}
	rn := core.Renotice{QuestionID: q.ID, Count: true, Now: t0, Event: event(q, core.EventReminded, t0),
		Deliveries: []core.Delivery{post(q, core.SurfaceSlack, "C1")}}
	p.arm(redisstore.RenotifyHash())
	err := a.Renotify(t.Context(), rn)
	mustHaveCut(t, p)
	for range 3 {
		if err := <-others; err != nil {
			t.Fatalf("a renotice in between: %v", err)
		}
	}
	if err != nil {
		t.Fatalf("the replayed renotice: %v; want it applied", err)
	}
	if got := mustGet(t, b, q.ID); got.Renotified != 4 {
		t.Fatalf("renotified %d, want 4", got.Renotified)
	}
	want := []core.EventKind{core.EventAsked, core.EventReminded, core.EventReminded, core.EventReminded, core.EventReminded}
	if k := kinds(t, b, q.ID); !slices.Equal(k, want) {
		t.Fatalf("events %v, want %v", k, want)
	}
	if ds := drain(t, b, core.SurfaceSlack); len(ds) != 1 {
		t.Fatalf("%d posts, want the replayed renotice's one", len(ds))
	}
}

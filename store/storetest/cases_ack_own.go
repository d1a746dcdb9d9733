package storetest

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

func init() {
	register("AckRemovesOnlyItsOwnClaim", testAckOwn)
}

// testAckOwn: a consumer frozen past the idle limit (a GC pause, a
// stopped VM) whose send then goes on acks a delivery another consumer
// has taken over meanwhile. That ack removes nothing: the delivery is
// the other consumer's, which may still fail its send and hand it back,
// and it must then come out again. Before, the late ack removed it
// from under the other consumer, whose hand-back then found nothing, and
// the delivery was never sent again (law 4: at least once). Nor does a
// late ack remove one the other consumer has handed back already.
func testAckOwn(t *testing.T, h Harness) {
	e := newEnv(t, h)
	ctx := t.Context()
	e.enqueueOne("k-own")
	mine := e.claimOne("a", time.Hour, 0)
	taken := e.claimOne("b", 0, 0) // a is presumed dead: b takes it over
	if taken.Key != mine.Key {
		t.Fatalf("b took %s, want %s", taken.Key, mine.Key)
	}

	// a wakes, its send done, and acks what it claimed.
	if err := e.store.Ack(ctx, core.SurfaceSlack, mine.ID); err != nil {
		t.Fatalf("a's late ack: %v", err)
	}
	if lost, err := e.store.Extend(ctx, core.SurfaceSlack, "b", []string{taken.ID}); err != nil || len(lost) != 0 {
		t.Fatalf("b's renewal after a's late ack: lost %q, %v; want b's claim kept", lost, err)
	}
	// b's send fails: b hands it back, and it comes out again.
	taken.Attempts--
	if err := e.store.Retry(ctx, taken, "b", 0); err != nil {
		t.Fatal(err)
	}
	// a's ack again, with it back in the outbox and nobody's claim.
	if err := e.store.Ack(ctx, core.SurfaceSlack, mine.ID); err != nil {
		t.Fatalf("a's second late ack: %v", err)
	}
	again := e.claimOne("c", time.Hour, 5*time.Second)
	if again.Key != mine.Key {
		t.Fatalf("handed out %s after b's hand-back, want %s", again.Key, mine.Key)
	}
	// Its own consumer's ack does remove it.
	if err := e.store.Ack(ctx, core.SurfaceSlack, again.ID); err != nil {
		t.Fatal(err)
	}
	e.claimNone("d", 0)
}

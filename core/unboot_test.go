package core_test

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestUnbootPutsBackTheBeatBeforeBoot: a start that failed after Boot
// leaves the heartbeat as Boot found it, so the downtime goes on; but a
// beat another replica wrote since (it is up) stays, and a first start,
// with no beat before it, has nothing to put back.
func TestUnbootPutsBackTheBeatBeforeBoot(t *testing.T) {
	ctx := t.Context()
	st := coretest.OpenStore(t)
	t0 := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	clock := core.NewSimClock(t0)
	svc := coretest.Service(t, st, coretest.Options{Clock: clock})
	boot := func() core.BootReport {
		t.Helper()
		rep, err := svc.Boot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	beat := func() time.Time { // the beat now, put back as it was
		t.Helper()
		b, err := st.Beat(ctx, time.Time{})
		if err == nil {
			_, err = st.Beat(ctx, b)
		}
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if err := svc.Unboot(ctx, boot()); err != nil || !beat().Equal(t0) {
		t.Fatalf("a first start's beat after Unboot: %s, %v; want %s", beat(), err, t0)
	}
	clock.Advance(time.Minute)
	if err := svc.Unboot(ctx, boot()); err != nil || !beat().Equal(t0) {
		t.Fatalf("the beat after a failed start: %s, %v; want the one before it, %s", beat(), err, t0)
	}
	clock.Advance(time.Minute)
	rep := boot()
	other := clock.Now().Add(time.Second)
	if _, err := st.Beat(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := svc.Unboot(ctx, rep); err != nil || !beat().Equal(other) {
		t.Fatalf("the beat after a failed start while another replica beat: %s, %v; want that replica's, %s", beat(), err, other)
	}
}

package storetest

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// OutboxStat checks a store's outbox gauge (core.OutboxStats): depth
// counts what is enqueued and not acked, per surface, and the oldest time
// is the first of those still waiting. open returns a fresh store.
func OutboxStat(t *testing.T, open func(t *testing.T) core.Store) {
	s := open(t)
	stats, ok := s.(core.OutboxStats)
	if !ok {
		t.Fatalf("%T does not report outbox stats", s)
	}
	ctx := t.Context()
	stat := func(surface core.Surface) core.OutboxStat {
		t.Helper()
		st, err := stats.OutboxStat(ctx, surface)
		if err != nil {
			t.Fatalf("outbox stat %s: %v", surface, err)
		}
		return st
	}
	if st := stat(core.SurfaceSlack); st.Depth != 0 || !st.Oldest.IsZero() {
		t.Fatalf("empty outbox: %+v", st)
	}
	before := time.Now().Add(-time.Second)
	at := time.Now().UTC().Truncate(time.Millisecond)
	var out []core.Delivery
	for i, room := range []string{"C1", "C2", "C3"} {
		out = append(out, core.Delivery{Key: "digest:" + room, Kind: core.DeliverDigest, Surface: core.SurfaceSlack,
			Room: room, Route: "ops", Since: at.Add(-time.Hour), CreatedAt: at.Add(time.Duration(i) * time.Millisecond)})
	}
	out = append(out, core.Delivery{Key: "digest:T1", Kind: core.DeliverDigest, Surface: core.SurfaceTelegram,
		Room: "-100", Route: "ops", Since: at.Add(-time.Hour), CreatedAt: at})
	if err := s.Enqueue(ctx, out); err != nil {
		t.Fatal(err)
	}
	st := stat(core.SurfaceSlack)
	if st.Depth != 3 || st.Oldest.Before(before) || st.Oldest.After(time.Now().Add(time.Second)) {
		t.Errorf("slack after three enqueued: %+v (enqueued at %v)", st, at)
	}
	if st := stat(core.SurfaceTelegram); st.Depth != 1 {
		t.Errorf("telegram after one enqueued: %+v", st)
	}
	if st := stat(core.SurfaceDiscord); st.Depth != 0 {
		t.Errorf("discord, never enqueued: %+v", st)
	}

	// A claimed delivery is still waiting until it is acked.
	got, err := s.Claim(ctx, core.SurfaceSlack, "c1", 2, time.Minute, 0)
	if err != nil || len(got) != 2 {
		t.Fatalf("claim: %d, %v", len(got), err)
	}
	if st := stat(core.SurfaceSlack); st.Depth != 3 {
		t.Errorf("after a claim without ack: depth %d, want 3", st.Depth)
	}
	for _, d := range got {
		if err := s.Ack(ctx, core.SurfaceSlack, d.ID); err != nil {
			t.Fatal(err)
		}
	}
	if st := stat(core.SurfaceSlack); st.Depth != 1 {
		t.Errorf("after two acks: depth %d, want 1", st.Depth)
	}
	// A delivery waiting to be retried is still to be delivered.
	got, err = s.Claim(ctx, core.SurfaceSlack, "c1", 2, time.Minute, 0)
	if err != nil || len(got) != 1 {
		t.Fatalf("claim the last: %d, %v", len(got), err)
	}
	if err := s.Retry(ctx, got[0], "c1", time.Hour); err != nil {
		t.Fatal(err)
	}
	if st := stat(core.SurfaceSlack); st.Depth != 1 {
		t.Errorf("with a retry waiting: depth %d, want 1", st.Depth)
	}
	if _, err := stats.OutboxStat(ctx, core.SurfaceAPI); core.ErrorCode(err) != core.CodeInvalid {
		t.Errorf("the api surface has no outbox: %v", err)
	}
}

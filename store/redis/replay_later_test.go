package redis_test

import (
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// replayedOnClock is replayed's pair of stores, both keeping the outbox's
// due times on clock, with the scripts of a delayed enqueue and of a
// close already on the server.
func replayedOnClock(t *testing.T) (*cutter, *redisstore.Store, *redisstore.Store, *core.SimClock) {
	t.Helper()
	p := newCutter(t, server.Addr())
	clock := core.NewSimClock(t0)
	prefix := randomPrefix()
	c := goredis.NewClient(&goredis.Options{Addr: p.addr})
	t.Cleanup(func() { _ = c.Close() })
	a := newStoreOn(t, c, redisstore.Options{Prefix: prefix, Now: clock.Now})
	b := newStore(t, redisstore.Options{Prefix: prefix, Now: clock.Now})
	warm := question(0, "run-warm", t0)
	mustCreate(t, b, warm)
	if _, err := b.Resolve(t.Context(), answer(warm, "ada", t0)); err != nil {
		t.Fatal(err)
	}
	d := delayedDigest("warm")
	if err := b.Enqueue(t.Context(), []core.Delivery{d}); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.Cancel(t.Context(), core.Pending{Surface: d.Surface, Key: d.Key}); err != nil || !ok {
		t.Fatalf("cancel the warm-up: %v, %v", ok, err)
	}
	return p, a, b, clock
}

func delayedDigest(key string) core.Delivery {
	return core.Delivery{Key: key, Kind: core.DeliverDigest, Surface: core.SurfaceSlack, Room: "C1", Route: "ops",
		CreatedAt: t0, Delay: time.Second}
}

// TestReplayedDelayedEnqueueWaitsOnce: a delayed enqueue whose reply was
// lost, and which go-redis therefore sent again, leaves one delivery: not
// due before its delay, handed out once after it.
func TestReplayedDelayedEnqueueWaitsOnce(t *testing.T) {
	p, a, b, clock := replayedOnClock(t)
	d := delayedDigest("digest/replayed")
	p.arm(redisstore.LaterHash())
	err := a.Enqueue(t.Context(), []core.Delivery{d})
	mustHaveCut(t, p)
	if err != nil {
		t.Fatalf("the replayed enqueue: %v", err)
	}
	if ds := drain(t, b, core.SurfaceSlack); len(ds) != 0 {
		t.Fatalf("handed out before its delay: %+v", ds)
	}
	clock.Advance(time.Second)
	if ds := drain(t, b, core.SurfaceSlack); len(ds) != 1 || ds[0].Key != d.Key {
		t.Fatalf("after its delay: %+v, want it once", ds)
	}
}

// TestReplayedCloseHoldsItsUpdateOnce: a close whose reply was lost, and
// which holds back the update of the card its caller's response shows,
// holds it once: the cancel its caller then sends takes it back whole,
// and nothing of it is ever handed out; the other card is edited once.
func TestReplayedCloseHoldsItsUpdateOnce(t *testing.T) {
	p, a, b, clock := replayedOnClock(t)
	q := question(0, "run-1", t0)
	mustCreate(t, b, q)
	tg := core.MessageRef{Surface: core.SurfaceTelegram, Room: "-1001", ID: "42", Delivery: string(q.ID) + ":post:telegram", Kind: core.DeliverPost, At: t0}
	dc := core.MessageRef{Surface: core.SurfaceDiscord, Room: "1234", ID: "9876", Delivery: string(q.ID) + ":post:discord", Kind: core.DeliverPost, At: t0}
	for _, ref := range []core.MessageRef{tg, dc} {
		if err := b.RecordMessage(t.Context(), q.ID, ref, event(q, core.EventNotified, t0)); err != nil {
			t.Fatal(err)
		}
	}
	read := mustGet(t, b, q.ID)
	tr := answer(q, "ada", t0)
	tr.Read, tr.Shown = read, &core.ShownCard{Surface: core.SurfaceDiscord, MessageID: dc.ID}
	got, err := resolveLosingTheReply(t, p, a, tr)
	if err != nil || got.State != core.StateAnswered {
		t.Fatalf("the replayed close: %+v, %v", got, err)
	}
	if ds := drain(t, b, core.SurfaceTelegram); len(ds) != 1 {
		t.Fatalf("telegram card's edits: %+v, want one", ds)
	}
	ver := read.Version + 1
	held := core.Pending{Surface: core.SurfaceDiscord, Key: core.UpdateKey(q.ID, ver, 1), QuestionID: q.ID, IfVersion: &ver}
	if ok, err := b.Cancel(t.Context(), held); err != nil || !ok {
		t.Fatalf("cancel the held update: %v, %v", ok, err)
	}
	clock.Advance(time.Hour)
	if ds := drain(t, b, core.SurfaceDiscord); len(ds) != 0 {
		t.Fatalf("the held update was handed out after its cancel: %+v", ds)
	}
}

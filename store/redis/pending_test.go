package redis_test

import (
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestHeldEntriesOfEarlierVersions: held card updates an earlier version
// wrote (a "h|<key>" member of the zset of retries, and "<ver> <time>
// <card>" in the held hash) are delayed deliveries as this version reads
// them: one is cancelled by its key before it falls due, another is
// handed out once due as the card update it was.
func TestHeldEntriesOfEarlierVersions(t *testing.T) {
	clock := core.NewSimClock(t0)
	prefix := randomPrefix()
	c := newClient(t)
	s := newStore(t, redisstore.Options{Prefix: prefix, Now: clock.Now})
	later, held := "{"+prefix+":s0}:later:discord", "{"+prefix+":s0}:held:discord"
	due := float64(t0.Add(core.ShownHold).UnixMilli())
	card := `"kind":"update","surface":"discord","room":"1234","question_id":"q","message":{"surface":"discord","room":"1234","id":"9876","kind":"post"}`
	for _, key := range []string{"q/update/held/a", "q/update/held/b"} {
		if err := c.ZAdd(t.Context(), later, goredis.Z{Score: due, Member: "h|" + key}).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.HSet(t.Context(), held, key, `3 "2026-03-01T09:00:00Z" `+card).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := s.Cancel(t.Context(), core.Pending{Surface: core.SurfaceDiscord, Key: "q/update/held/a"}); err != nil || !ok {
		t.Fatalf("cancel of an earlier version's held update: %v, %v", ok, err)
	}
	if ds := drain(t, s, core.SurfaceDiscord); len(ds) != 0 {
		t.Fatalf("handed out before due: %+v", ds)
	}
	clock.Advance(core.ShownHold)
	ds := drain(t, s, core.SurfaceDiscord)
	if len(ds) != 1 || ds[0].Key != "q/update/held/b" || ds[0].Kind != core.DeliverUpdate || ds[0].Message == nil ||
		ds[0].Message.ID != "9876" || !ds[0].CreatedAt.Equal(t0) {
		t.Fatalf("once due: %+v", ds)
	}
	if n, err := c.HLen(t.Context(), held).Result(); err != nil || n != 0 {
		t.Fatalf("the held hash keeps %d entries (%v)", n, err)
	}
}

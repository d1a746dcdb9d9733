package redis_test

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
	goredis "github.com/redis/go-redis/v9"
)

// TestExtendRenewsEveryShardItCan: with one shard failing (its consumer
// group gone, answering NOGROUP as a shard failing over answers with an
// error), Extend still renews the claims on the others, and says it
// failed; before, it stopped at the first failing shard in map order, so
// the healthy shards' claims went idle and another replica took over
// deliveries still being sent.
func TestExtendRenewsEveryShardItCan(t *testing.T) {
	prefix := randomPrefix()
	s := newStore(t, redisstore.Options{Prefix: prefix, Shards: 2})
	ctx := t.Context()
	var out []core.Delivery
	for sh := range 2 {
		out = append(out, core.Delivery{Key: "k" + string(rune('0'+sh)), Kind: core.DeliverPost, Surface: core.SurfaceSlack,
			Room: "C1", QuestionID: core.NewID(sh), CreatedAt: t0})
	}
	if err := s.Enqueue(ctx, out); err != nil {
		t.Fatal(err)
	}
	ds, err := s.Claim(ctx, core.SurfaceSlack, "a", 10, time.Hour, 0)
	if err != nil || len(ds) != 2 {
		t.Fatalf("claim: %+v %v", ds, err)
	}
	var ids []string
	var healthy string
	for _, d := range ds {
		ids = append(ids, d.ID)
		if strings.HasPrefix(d.ID, "0/") {
			healthy = strings.TrimPrefix(d.ID, "0/")
		}
	}
	c := newClient(t)
	if err := c.XGroupDestroy(ctx, "{"+prefix+":s1}:out:slack", "askbridge").Err(); err != nil {
		t.Fatal(err)
	}
	good := "{" + prefix + ":s0}:out:slack"
	// The shards are tried in no set order: ten rounds leave a one in a
	// thousand chance that the old code renewed the healthy one each time.
	for round := range 10 {
		// The healthy claim made idle for an hour, as if never renewed.
		if err := c.Do(ctx, "XCLAIM", good, "askbridge", "a", 0, healthy, "IDLE", time.Hour.Milliseconds(), "JUSTID").Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Extend(ctx, core.SurfaceSlack, "a", ids); err == nil {
			t.Fatal("Extend with a failing shard reported no error")
		}
		p, err := c.XPendingExt(ctx, &goredis.XPendingExtArgs{Stream: good, Group: "askbridge", Start: healthy, End: healthy, Count: 1}).Result()
		if err != nil || len(p) != 1 {
			t.Fatalf("xpending: %v %v", p, err)
		}
		if p[0].Idle >= time.Minute {
			t.Fatalf("round %d: the healthy shard's claim was not renewed (idle %s) while another shard failed", round, p[0].Idle)
		}
	}
}

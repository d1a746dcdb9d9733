package redis_test

import (
	"context"
	"slices"
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
	ids, onShard0 := claimOnTwoShards(ctx, t, s, prefix)
	healthy := streamIDOf(t, onShard0)
	c := newClient(t)
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

// TestExtendReportsLostClaimsOfTheShardsThatAnswer: a's claim on shard
// 0 taken over by b (the XCLAIM of claim.lua's XAUTOCLAIM) is reported
// lost, under the id a was handed, while shard 1 fails: the lost claim
// is one the drain must not send whatever another shard does. Before,
// extend.lua counted what it renewed and Go dropped the count, so a
// drain woken from a freeze past MinIdle sent what b was sending too.
func TestExtendReportsLostClaimsOfTheShardsThatAnswer(t *testing.T) {
	prefix := randomPrefix()
	s := newStore(t, redisstore.Options{Prefix: prefix, Shards: 2})
	ctx := t.Context()
	ids, onShard0 := claimOnTwoShards(ctx, t, s, prefix)
	c := newClient(t)
	good := "{" + prefix + ":s0}:out:slack"
	if err := c.Do(ctx, "XCLAIM", good, "askbridge", "b", 0, streamIDOf(t, onShard0), "JUSTID").Err(); err != nil {
		t.Fatal(err)
	}
	lost, err := s.Extend(ctx, core.SurfaceSlack, "a", ids)
	if err == nil {
		t.Fatal("Extend with a failing shard reported no error")
	}
	if want := []string{onShard0}; !slices.Equal(lost, want) {
		t.Fatalf("Extend reported lost %q, want %q (b holds it)", lost, want)
	}
}

// claimOnTwoShards enqueues a delivery on each of s's two shards, has
// consumer a claim both, and makes shard 1 fail (its consumer group
// gone, answering NOGROUP as a shard failing over answers with an
// error). It returns the ids a was handed, and the one on shard 0.
func claimOnTwoShards(ctx context.Context, t *testing.T, s *redisstore.Store, prefix string) (ids []string, onShard0 string) {
	t.Helper()
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
	for _, d := range ds {
		ids = append(ids, d.ID)
		if strings.HasPrefix(d.ID, "0/") {
			onShard0 = d.ID
		}
	}
	if err := newClient(t).XGroupDestroy(ctx, "{"+prefix+":s1}:out:slack", "askbridge").Err(); err != nil {
		t.Fatal(err)
	}
	return ids, onShard0
}

// streamIDOf is the stream entry of a delivery id the store handed out
// ("<shard>/<stream id>/<consumer>").
func streamIDOf(t *testing.T, id string) string {
	t.Helper()
	parts := strings.SplitN(id, "/", 3)
	if len(parts) != 3 {
		t.Fatalf("delivery id %q names no stream entry", id)
	}
	return parts[1]
}

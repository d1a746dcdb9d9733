package redis_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

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
	var onShard0 string
	for _, d := range ds {
		ids = append(ids, d.ID)
		if strings.HasPrefix(d.ID, "0/") {
			onShard0 = d.ID
		}
	}
	c := newClient(t)
	good := "{" + prefix + ":s0}:out:slack"
	if err := c.Do(ctx, "XCLAIM", good, "askbridge", "b", 0, strings.TrimPrefix(onShard0, "0/"), "JUSTID").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.XGroupDestroy(ctx, "{"+prefix+":s1}:out:slack", "askbridge").Err(); err != nil {
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

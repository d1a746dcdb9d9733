package topology_test

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// keysOfAQuestion lists every key a question's life writes (its ask, its
// cards' deliveries queued, its answer), found by comparing every key of
// the store on every primary before and after, and asserts they all hash
// to the one slot of the question's shard: on a cluster each transition
// is one script on one node.
func keysOfAQuestion(t *testing.T, c *redistest.Cluster, h *harness) {
	ctx := t.Context()
	st := h.Open(t)
	prefix := h.options(t, st).Prefix
	routes := map[string]core.Route{core.DefaultRoute: {
		Rooms:    []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}},
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}},
	}}
	svc := coretest.Service(t, st, coretest.Options{Routes: routes})
	cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: c.Addrs()})
	t.Cleanup(func() { _ = cc.Close() })

	before := dumpAll(ctx, t, cc, prefix)
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "agent-a", RunID: "run-slots",
		ToolCallID: "call-1", Text: "Which region?", Reversibility: core.HardToReverse})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID,
		Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ada", Name: "Ada"}, Text: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	after := dumpAll(ctx, t, cc, prefix)

	var written []string
	for k, v := range after {
		if old, ok := before[k]; !ok || old != v {
			written = append(written, k)
		}
	}
	sort.Strings(written)
	tag := fmt.Sprintf("{%s:s%d}", prefix, core.ShardOf(q.ID))
	want, err := cc.ClusterKeySlot(ctx, tag).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range written {
		got, err := cc.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("key %s is in slot %d, not the question's %d", k, got, want)
		}
	}
	// The question itself, its shard's events and its outbox at least.
	for _, part := range []string{string(q.ID), "events", "out"} {
		if !strings.Contains(strings.Join(written, " "), part) {
			t.Errorf("no written key names %q: %v", part, written)
		}
	}
	t.Logf("a question's life wrote %d keys, all in slot %d: %v", len(written), want, written)
}

// dumpAll is every key of a store (by its prefix) on every primary, with
// its serialized value.
func dumpAll(ctx context.Context, t *testing.T, cc *goredis.ClusterClient, prefix string) map[string]string {
	t.Helper()
	var mu sync.Mutex
	all := map[string]string{}
	err := cc.ForEachMaster(ctx, func(ctx context.Context, n *goredis.Client) error {
		it := n.Scan(ctx, 0, "*"+prefix+"*", 1000).Iterator()
		for it.Next(ctx) {
			v, err := n.Dump(ctx, it.Val()).Result()
			if err == goredis.Nil {
				continue // gone since the scan
			}
			if err != nil {
				return err
			}
			mu.Lock()
			all[it.Val()] = v
			mu.Unlock()
		}
		return it.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// TestShardSpread measures how the store's shards (default prefix)
// spread over a cluster's three primaries with the slots split evenly,
// the figures the README's advice on choosing shards quotes, and that
// Spread reports what the cluster says.
func TestShardSpread(t *testing.T) {
	t.Parallel()
	c := redistest.StartReplicatedCluster(t, 3, 0)
	d := redisstore.Dial{Topology: redisstore.Cluster, URL: c.URL()}
	// shards -> shards on each primary, in slot order.
	want := map[int][3]int{3: {1, 0, 2}, 6: {1, 1, 4}, 8: {2, 2, 4}, 12: {4, 2, 6}, 24: {9, 6, 9}, 32: {11, 10, 11}}
	cl, err := d.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for shards, counts := range want {
		// A store keeps the shard count it was made with: each count is a
		// store made anew on the same keys, so the slots are the same.
		if err := cl.Del(t.Context(), "{ab:s0}:shards").Err(); err != nil {
			t.Fatal(err)
		}
		st, err := redisstore.Connect(t.Context(), d, redisstore.Options{Shards: shards})
		if err != nil {
			t.Fatal(err)
		}
		spread, err := st.Spread(t.Context())
		_ = st.Close()
		if err != nil {
			t.Fatal(err)
		}
		for i, n := range c.Nodes {
			for _, shard := range spread[n.Addr()] {
				p, err := c.PrimaryOf(slotOf(t, n, fmt.Sprintf("{ab:s%d}", shard)))
				if err != nil || p != n {
					t.Fatalf("shard %d: Spread says %s, the cluster %v (%v)", shard, n.Addr(), p, err)
				}
			}
			if got := len(spread[n.Addr()]); got != counts[i] {
				t.Errorf("%d shards: %d on primary %d, want %d (%v)", shards, got, i, counts[i], spread)
			}
		}
	}
}

func slotOf(t *testing.T, n *redistest.Server, key string) int {
	t.Helper()
	v, err := n.Do("CLUSTER", "KEYSLOT", key)
	if err != nil {
		t.Fatal(err)
	}
	s, err := strconv.Atoi(v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEvenTheSpreadByMovingSlots follows the README's advice on a live
// store: twelve shards land 4/2/6 on three primaries; moving two shards'
// slots (with their keys) from the busiest to the idlest makes it 4/4/4,
// and the store, serving throughout, still has and closes every question.
func TestEvenTheSpreadByMovingSlots(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := redistest.StartReplicatedCluster(t, 3, 0)
	st, err := redisstore.Connect(ctx, redisstore.Dial{Topology: redisstore.Cluster, URL: c.URL()}, redisstore.Options{Shards: 12})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	svc := coretest.Service(t, st, coretest.Options{})
	var qs []*core.Question
	for i := range 36 {
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "agent-a", RunID: "run-spread",
			ToolCallID: fmt.Sprintf("call-%d", i), Text: "Which region?", Reversibility: core.HardToReverse})
		if err != nil {
			t.Fatal(err)
		}
		qs = append(qs, q)
	}
	counts := func() map[*redistest.Server][]int {
		spread, err := st.Spread(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[*redistest.Server][]int{}
		for _, n := range c.Nodes {
			out[n] = spread[n.Addr()]
		}
		return out
	}
	before := counts()
	busiest, idlest := c.Nodes[2], c.Nodes[1]
	if len(before[c.Nodes[0]]) != 4 || len(before[idlest]) != 2 || len(before[busiest]) != 6 {
		t.Fatalf("twelve shards spread %v, want 4/2/6", before)
	}
	for _, shard := range before[busiest][:2] {
		if err := c.MoveSlot(slotOf(t, busiest, fmt.Sprintf("{ab:s%d}", shard)), idlest); err != nil {
			t.Fatal(err)
		}
	}
	after := counts()
	for _, n := range c.Nodes {
		if len(after[n]) != 4 {
			t.Fatalf("after moving two slots the spread is %v, want 4/4/4", after)
		}
	}
	for _, q := range qs {
		if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID,
			Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ada", Name: "Ada"}, Text: "eu-west-1"}); err != nil {
			t.Fatalf("answer %s (shard %d) after the move: %v", q.ID, core.ShardOf(q.ID), err)
		}
	}
}

// TestPingNamesTheFirstShardDown: with two of three primaries gone, the
// readiness check names the same one on every call, the primary of the
// lowest shard among theirs, rather than whichever a map met first.
func TestPingNamesTheFirstShardDown(t *testing.T) {
	t.Parallel()
	c := redistest.StartReplicatedCluster(t, 3, 0)
	st, err := redisstore.Connect(t.Context(), redisstore.Dial{Topology: redisstore.Cluster, URL: c.URL()}, redisstore.Options{Shards: 6})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	spread, err := st.Spread(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Ping(t.Context()); err != nil {
		t.Fatalf("ping with every primary up: %v", err)
	}
	first := -1
	for _, n := range c.Nodes[1:] {
		for _, shard := range spread[n.Addr()] {
			if first < 0 || shard < first {
				first = shard
			}
		}
		n.Close()
	}
	if first < 0 {
		t.Fatalf("no shard on the primaries stopped: %v", spread)
	}
	want := fmt.Sprintf("the primary of shard %d does not answer", first)
	for range 20 {
		if err := st.Ping(t.Context()); err == nil || !strings.Contains(err.Error(), want+":") {
			t.Fatalf("ping with two primaries gone: %v; want %q", err, want)
		}
	}
}

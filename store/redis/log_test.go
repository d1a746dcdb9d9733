package redis_test

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	goredis "github.com/redis/go-redis/v9"

	redisstore "github.com/askbridge/askbridge/store/redis"
)

// prefixKeys is every key of prefix on c, with its value's dump, so that
// a write of any kind shows.
func prefixKeys(t *testing.T, c goredis.UniversalClient, prefix string) map[string]string {
	t.Helper()
	ks, err := c.Keys(t.Context(), "{"+prefix+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(ks)
	out := map[string]string{}
	for _, k := range ks {
		d, err := c.Dump(t.Context(), k).Result()
		if err != nil {
			t.Fatal(err)
		}
		out[k] = d
	}
	return out
}

// TestOpenLogOnlyReads: the log verify reads opens without writing a
// key, reads what Store.Events reads, and refuses, still writing
// nothing, a Redis that holds no store (a wrong database or prefix), a
// store of earlier layout (which a Store would migrate, under replicas of
// the earlier version that may still run) and a store of another shard
// count. Before, verify opened a Store: it made a store where there was
// none and reported its empty log as holding, and migrated the layout.
func TestOpenLogOnlyReads(t *testing.T) {
	ctx := t.Context()
	c := newClient(t)
	dial := redisstore.Dial{Topology: redisstore.Single, URL: server.URL()}
	open := func(prefix string, shards int) (*redisstore.Log, error) {
		return redisstore.OpenLog(ctx, dial, redisstore.Options{Prefix: prefix, Shards: shards})
	}

	// No store under this prefix.
	empty := randomPrefix()
	if _, err := open(empty, 0); err == nil || !strings.Contains(err.Error(), "holds no askbridge store") {
		t.Errorf("open on no store: %v, want a refusal naming no store", err)
	}
	if ks := prefixKeys(t, c, empty); len(ks) != 0 {
		t.Errorf("open on no store wrote %d keys: %v", len(ks), ks)
	}

	// A store of this version, of two shards: read as Store.Events reads.
	s := newStoreOn(t, c, redisstore.Options{Shards: 2})
	prefix := redisstore.Prefix(s)
	for shard := range 2 {
		mustCreate(t, s, question(shard, "run-1", t0.Add(time.Duration(shard)*time.Second)))
	}
	want, err := s.Events(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	before := prefixKeys(t, c, prefix)
	l, err := open(prefix, 2)
	if err != nil {
		t.Fatalf("open the log of a store of this version: %v", err)
	}
	got, err := l.Events(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" || len(got) != 2 {
		t.Errorf("the log's events (-store +log, %d events):\n%s", len(got), d)
	}
	if d := cmp.Diff(before, prefixKeys(t, c, prefix)); d != "" {
		t.Errorf("opening and reading the log changed keys (-before +after):\n%s", d)
	}

	// Another shard count.
	if _, err := open(prefix, 1); err == nil || !strings.Contains(err.Error(), "store of 2 shards") {
		t.Errorf("open with 1 shard a store of 2: %v, want a refusal", err)
	}

	// An earlier layout: no layout key on a shard, as a version before
	// layout 2 keeps it.
	if err := c.Del(ctx, redisstore.LayoutKeys(s)[1]).Err(); err != nil {
		t.Fatal(err)
	}
	before = prefixKeys(t, c, prefix)
	if _, err := open(prefix, 2); err == nil || !strings.Contains(err.Error(), "shard 1 keeps no layout") {
		t.Errorf("open on an earlier layout: %v, want a refusal", err)
	}
	if d := cmp.Diff(before, prefixKeys(t, c, prefix)); d != "" {
		t.Errorf("open on an earlier layout changed keys (-before +after):\n%s", d)
	}
	// A layout other than this version's.
	if err := c.Set(ctx, redisstore.LayoutKeys(s)[1], redisstore.LayoutVersion+1, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := open(prefix, 2); err == nil || !strings.Contains(err.Error(), "this version reads layout") {
		t.Errorf("open on a newer layout: %v, want a refusal", err)
	}
}

package redis_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestEventsPagedAcrossShardsMissNone: with several shards, event numbers
// follow each shard's server clock, and one shard's can run ahead of
// another's (a cluster node whose clock is fast, or a burst that pushed
// its counter past the clock). A reader paging by Seq, as /v1/events,
// the SSE stream and the audit export do, got an event of the fast shard,
// moved its cursor past it, and never saw an event the slow shard
// appended just after with a lower Seq. Events below every shard's next
// number are handed out; the rest wait for a later page, so every event
// is read once.
func TestEventsPagedAcrossShardsMissNone(t *testing.T) {
	s := newStore(t, redisstore.Options{Shards: 2})
	ctx := t.Context()
	c := newClient(t)
	now := time.Now()
	slow, fast := question(0, "run-1", now), question(1, "run-1", now)
	mustCreate(t, s, slow)
	mustCreate(t, s, fast)
	var since int64
	seen := map[int64]bool{}
	page := func() {
		t.Helper()
		evs, err := s.Events(ctx, since, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if seen[e.Seq] {
				t.Fatalf("event %d read twice", e.Seq)
			}
			seen[e.Seq] = true
			since = e.Seq
		}
	}
	page()
	if len(seen) != 2 {
		t.Fatalf("read %d of the 2 asked events", len(seen))
	}
	// Shard 1's clock runs 300 ms ahead: its counter is past the server's.
	key := redisstore.SeqKey(s, 1)
	cur, err := c.Get(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	_, hash, _ := strings.Cut(cur, " ")
	ahead := time.Now().Add(300 * time.Millisecond).UnixMicro()
	if err := c.Set(ctx, key, strconv.FormatInt(ahead, 10)+" "+hash, 0).Err(); err != nil {
		t.Fatal(err)
	}
	for _, e := range []core.Event{event(fast, core.EventReminded, now), event(slow, core.EventReminded, now)} {
		if _, err := s.Append(ctx, e); err != nil {
			t.Fatal(err)
		}
		page() // the fast shard's event first, then the slow one's, lower
	}
	// The slow shard's mark passes the fast shard's event once its
	// clock does, or once its counter does: moved past it here, rather
	// than waiting out the 300 ms.
	slowKey := redisstore.SeqKey(s, 0)
	cur, err = c.Get(ctx, slowKey).Result()
	if err != nil {
		t.Fatal(err)
	}
	_, hash, _ = strings.Cut(cur, " ")
	if err := c.Set(ctx, slowKey, strconv.FormatInt(ahead+time.Second.Microseconds(), 10)+" "+hash, 0).Err(); err != nil {
		t.Fatal(err)
	}
	page()
	if len(seen) != 4 {
		all, _ := s.Events(ctx, 0, 0)
		t.Fatalf("paging read %d of %d events", len(seen), len(all))
	}
}

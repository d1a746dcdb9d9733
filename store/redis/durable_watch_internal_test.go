package redis

import (
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/internal/redistest"
)

// TestDurableWatchFollowsAMovedSlot: a durable WATCH transaction (how
// the standing approvals change) whose slot has moved runs again, whole,
// on the slot's new primary: when WATCH itself meets MOVED, and when the
// slot moves while the transaction runs, so that the write queued in
// its MULTI meets MOVED and EXEC discards the transaction (EXECABORT).
// Before, the first came back as the MOVED (a 503), and the second as
// EXECABORT, which says nothing of a failover (a 500).
//
// The client reloads its slot map only when a redirect tells it to, so
// each transaction is the first to meet the slot where it now is; no
// replica is asked for, as what is tested is where the transaction goes.
func TestDurableWatchFollowsAMovedSlot(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cl := redistest.StartReplicatedCluster(t, 2, 0)
	cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: cl.Addrs(), ClusterStateReloadInterval: time.Hour})
	t.Cleanup(func() { _ = cc.Close() })
	c := &durableClient{UniversalClient: cc, d: Durability{Timeout: time.Second}}
	const key = "{durable-watch}:standing"
	n := slot(key)
	owner := func() *redistest.Server {
		t.Helper()
		p, err := cl.PrimaryOf(n)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	other := func() *redistest.Server {
		if o := owner(); o == cl.Nodes[0] {
			return cl.Nodes[1]
		}
		return cl.Nodes[0]
	}
	put := func(value string, during func()) int {
		t.Helper()
		runs := 0
		err := c.Watch(ctx, func(tx *goredis.Tx) error {
			runs++
			if runs == 1 && during != nil {
				during()
			}
			_, err := tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
				p.HSet(ctx, key, "grant", value)
				return nil
			})
			return err
		}, key)
		if err != nil {
			t.Fatalf("put %s: %v", value, err)
		}
		if got, err := owner().Do("HGET", key, "grant"); err != nil || got != value {
			t.Fatalf("put %s: the slot's primary has %q (%v)", value, got, err)
		}
		return runs
	}
	move := func() {
		t.Helper()
		if err := cl.MoveSlot(n, other()); err != nil {
			t.Fatal(err)
		}
	}
	put("before", nil)
	move()
	if runs := put("after a move", nil); runs != 1 {
		t.Errorf("WATCH met MOVED, yet the transaction ran %d times", runs)
	}
	if runs := put("while moving", move); runs != 2 {
		t.Errorf("the transaction met MOVED in its MULTI and ran %d times, want 2", runs)
	}
}

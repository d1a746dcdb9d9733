package topology_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestDurableWriteFollowsAMovedSlot: with durability on, a write to a
// slot that moved (a reshard) since the client last read the slot map
// goes to the slot's new owner, and its wait with it, so the caller is
// told it succeeded only once a replica of the new owner holds it. So
// does a write to a slot half moved that Redis sends on with ASK, and the
// move then finishes. Before, the durable path sent the write to the node
// its stale map named and gave the caller the MOVED (or ASK) as a 503.
//
// The store's client reloads its slot map only when a redirect tells it
// to (not every second, as Connect's does), so each write below is the
// first to meet the slot where it now is; and the writes go straight to
// the store (core.Apply with the question as read before the move), as a
// read first would follow the redirect and reload the map for them.
func TestDurableWriteFollowsAMovedSlot(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := redistest.StartReplicatedCluster(t, 3, 1)
	client := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: c.Addrs(), ClusterStateReloadInterval: time.Hour})
	t.Cleanup(func() { _ = client.Close() })
	prefix := randomPrefix()
	st, err := redisstore.New(ctx, client, redisstore.Options{Prefix: prefix, Shards: 1,
		Durability: redisstore.Durability{Replicas: 1, Timeout: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	svc := coretest.Service(t, st, coretest.Options{})
	var qs []*core.Question
	for _, call := range []string{"call-1", "call-2"} {
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "agent-a", RunID: "run-moved",
			ToolCallID: call, Text: "Which region?", Reversibility: core.HardToReverse})
		if err != nil {
			t.Fatal(err)
		}
		qs = append(qs, q)
	}
	tag := "{" + prefix + ":s0}"
	slot := slotOf(t, c.Nodes[0], tag)
	src, err := c.PrimaryOf(slot)
	if err != nil {
		t.Fatal(err)
	}
	other := func(not ...*redistest.Server) *redistest.Server {
		for _, p := range c.Primaries() {
			if !slices.Contains(not, p) {
				return p
			}
		}
		t.Fatal("no other primary")
		return nil
	}
	// held checks, the moment a write returned, that a replica of the
	// primary that took it has key (with want in field state, if set).
	// A key of a slot on its way to the primary is looked for with KEYS,
	// which names no key: the replica would send a read of it on, as its
	// primary does not serve the slot yet.
	held := func(what string, owner *redistest.Server, key, want string) {
		t.Helper()
		r := c.ReplicaOf(owner)
		if r == nil {
			t.Fatalf("%s: no replica of %s", what, owner.Addr())
		}
		got, err := r.ReadReplica("KEYS", key)
		if want != "" {
			got, err = r.ReadReplica("HGET", key, "state")
		}
		if err != nil || want == "" && got != key || want != "" && !strings.Contains(got, want) {
			t.Fatalf("%s: the replica %s of the new owner %s has %q (%v) for %s", what, r.Addr(), owner.Addr(), got, err, key)
		}
	}
	closeIt := func(what string, q *core.Question, owner *redistest.Server) {
		t.Helper()
		now := time.Now()
		_, err := core.Apply(ctx, st, core.Transition{QuestionID: q.ID, Read: q, Now: now,
			Resolution: &core.Resolution{State: core.StateAnswered, At: now, Answer: "eu-west-1",
				Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ada", Name: "Ada"}},
			Event: core.Event{QuestionID: q.ID, RunID: q.RunID, At: now, Kind: core.EventAnswered, Surface: core.SurfaceAPI}})
		if err != nil {
			t.Fatalf("%s: a durable close: %v", what, err)
		}
		held(what, owner, tag+":q:"+string(q.ID), "answered")
	}

	// MOVED: the slot has gone whole to another primary.
	dst := other(src)
	if err := c.MoveSlot(slot, dst); err != nil {
		t.Fatal(err)
	}
	closeIt("after the slot moved", qs[0], dst)

	// ASK: the slot is on its way to a third primary, and a lease's key,
	// new, is not on dst, which sends the lease on to where it is going.
	m, err := c.BeginMove(slot, other(src, dst))
	if err != nil || m == nil {
		t.Fatalf("begin moving slot %d: %v", slot, err)
	}
	took, err := st.Lease(ctx, "posting:moved", "owner-1", time.Hour)
	if err != nil || !took {
		t.Fatalf("a durable lease while the slot moves: %v %v", took, err)
	}
	held("while the slot moves", m.Dst, tag+":l:posting:moved", "")
	// What the lease wrote on the node it was asked to leaves the move
	// free to finish (MIGRATE refuses a key the target has already).
	if err := m.Finish(); err != nil {
		t.Fatalf("finish the move after a write it was asked for: %v", err)
	}
	closeIt("after the move finished", qs[1], m.Dst)
}

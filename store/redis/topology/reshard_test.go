package topology_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestReadsWhileASlotMoves: while a shard's slot moves (redis-cli
// --cluster reshard: the slot is marked migrating and importing, then
// its keys go over in batches), the questions of that shard can still be
// read and listed, before any key has moved, once a question's keys have,
// and while a closed question's keys are split between the two nodes. A read of an open question declares no key that does not exist
// (its resolution), which Redis would refuse with TRYAGAIN for the whole
// move. What writes to the shard meanwhile may be refused, but only as
// a failover's error (503, try again).
func TestReadsWhileASlotMoves(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := redistest.StartReplicatedCluster(t, 3, 0)
	const shards = 3
	st, err := redisstore.Connect(ctx, redisstore.Dial{Topology: redisstore.Cluster, URL: c.URL()}, redisstore.Options{Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	svc, err := core.New(st, core.Config{Routes: coretest.APIRoutes(), ActorKey: []byte(coretest.ActorKey), Shards: shards}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ada := core.Decider{Surface: core.SurfaceAPI, ID: "ada"}
	// Two questions of shard 2 (one to answer now, one left open), and
	// one open in each other shard.
	var moving []*core.Question
	open := map[core.QuestionID]bool{}
	for i := 0; len(moving) < 2 || len(open) < shards; i++ {
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r",
			ToolCallID: fmt.Sprint("c", i), Text: "Which region?", Reversibility: core.HardToReverse})
		if err != nil {
			t.Fatal(err)
		}
		if core.ShardOf(q.ID) == 2 && len(moving) < 2 {
			moving = append(moving, q)
		}
		open[q.ID] = true
	}
	closed, still := moving[0], moving[1]
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: closed.ID, Decider: ada, Text: "eu"}); err != nil {
		t.Fatal(err)
	}
	delete(open, closed.ID)

	slot := slotOf(t, c.Nodes[0], "{ab:s2}")
	m, err := c.BeginMove(slot, nil)
	if err != nil || m == nil {
		t.Fatalf("begin moving slot %d: %v", slot, err)
	}
	move := func(keys ...string) {
		t.Helper()
		if err := m.Keys(keys...); err != nil {
			t.Fatal(err)
		}
	}

	reads := func(when string) {
		t.Helper()
		if q, err := st.Get(ctx, still.ID); err != nil || q.State != core.StateOpen {
			t.Errorf("%s: get the open question: %v, %v", when, q, err)
		}
		// By a store of its own each time: a store keeps what it read of
		// a closed question, and would not read it again.
		other, err := redisstore.Connect(ctx, redisstore.Dial{Topology: redisstore.Cluster, URL: c.URL()}, redisstore.Options{Shards: shards})
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if q, err := other.Get(ctx, closed.ID); err != nil || q.State != core.StateAnswered || q.Resolution == nil {
			t.Errorf("%s: get the answered question: %+v, %v", when, q, err)
		}
		qs, _, err := st.ListOpen(ctx, "", 50)
		if err != nil {
			t.Errorf("%s: list open: %v", when, err)
		}
		page, err := st.OpenPage(ctx, core.OpenFilter{}, "", 50)
		if err != nil {
			t.Errorf("%s: open page: %v", when, err)
		}
		for what, got := range map[string][]*core.Question{"list open": qs, "open page": page.Questions} {
			var ids []core.QuestionID
			for _, q := range got {
				ids = append(ids, q.ID)
			}
			for id := range open {
				if err == nil && !slices.Contains(ids, id) {
					t.Errorf("%s: %s misses open question %s: %v", when, what, id, ids)
				}
			}
		}
	}
	reads("slot marked, no key moved")

	// A write to the moving shard may meet TRYAGAIN; if so, it says try
	// again (Unavailable), it does not fail as broken.
	if _, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", ToolCallID: "during",
		Text: "Which region?", Reversibility: core.HardToReverse}); err != nil && !redisstore.Unavailable(err) {
		t.Errorf("an ask while the slot moves: %v, not unavailable", err)
	}

	// The open question's own keys go over first; the shard's indexes
	// and streams stay behind for now.
	move("{ab:s2}:q:"+string(still.ID), "{ab:s2}:d:"+string(still.ID))
	reads("the open question's keys moved")

	// The answered question's keys may go over in two batches
	// (redis-cli moves a slot's keys ten at a time, in no order of the
	// store's): between them it is read whole, each key where it is.
	move("{ab:s2}:q:"+string(closed.ID), "{ab:s2}:d:"+string(closed.ID))
	reads("the answered question's hash and document moved, not its resolution")
	move("{ab:s2}:r:" + string(closed.ID))
	reads("the answered question's keys moved")

	if err := m.Finish(); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: still.ID, Decider: ada, Text: "eu"}); err != nil {
		t.Fatalf("answer after the move: %v", err)
	}
	var ce *core.ClosedError
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: closed.ID, Decider: ada, Text: "eu"}); !errors.As(err, &ce) {
		t.Fatalf("answer the answered question after the move: %v", err)
	}
}

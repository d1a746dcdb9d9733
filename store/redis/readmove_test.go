package redis_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestReadScriptWhileAClosedQuestionMoves: redis-cli moves a slot's keys
// in batches, in no order of the store's, so an answered question's
// resolution may go over before or after its hash and document. Between
// the two, the read script (what a read runs while the autopipeliner is
// in use, and when a pipelined read was torn) finds the question whole,
// or says try again (Unavailable); it never finds it answered with no
// resolution, nor fails as broken.
func TestReadScriptWhileAClosedQuestionMoves(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := redistest.StartReplicatedCluster(t, 2, 0)
	st, err := redisstore.Connect(ctx, redisstore.Dial{Topology: redisstore.Cluster, URL: c.URL()}, redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	svc := coretest.Service(t, st, coretest.Options{})
	var answered []core.QuestionID
	for i := range 2 {
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r",
			ToolCallID: strconv.Itoa(i), Text: "Which region?", Reversibility: core.HardToReverse})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Text: "eu",
			Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ada"}}); err != nil {
			t.Fatal(err)
		}
		answered = append(answered, q.ID)
	}

	n, err := c.Nodes[0].Do("CLUSTER", "KEYSLOT", "{ab:s0}")
	if err != nil {
		t.Fatal(err)
	}
	slot, _ := strconv.Atoi(n)
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
	read := func(id core.QuestionID, when string) {
		t.Helper()
		qs, err := redisstore.ReadOne(ctx, st, id)
		switch {
		case err != nil && !redisstore.Unavailable(err):
			t.Errorf("%s: %v, not unavailable", when, err)
		case err == nil && (len(qs) != 1 || qs[0].State != core.StateAnswered || qs[0].Resolution == nil):
			t.Errorf("%s: read %+v, want the question answered with its resolution", when, qs)
		}
	}
	a, b := answered[0], answered[1]
	move("{ab:s0}:r:" + string(a))
	read(a, "its resolution moved, not its hash and document")
	move("{ab:s0}:q:"+string(b), "{ab:s0}:d:"+string(b))
	read(b, "its hash and document moved, not its resolution")
}

// TestReadTornByAPurge: a read of several questions is one pipeline of
// single-key reads, which Redis may serve in parts, so a purge may run
// between a closed question's document and its resolution. The read
// then reads that question again at one moment (and finds it gone); it
// does not hand out the question answered with no resolution.
func TestReadTornByAPurge(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := newClient(t)
	var purgeMidway atomic.Bool
	c.AddHook(purgeHook{&purgeMidway})
	st := newStoreOn(t, c, redisstore.Options{})
	svc := coretest.Service(t, st, coretest.Options{})
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r",
		ToolCallID: "c", Text: "Which region?", Reversibility: core.HardToReverse})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Text: "eu",
		Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ada"}}); err != nil {
		t.Fatal(err)
	}
	purgeMidway.Store(true)
	got, err := st.Get(ctx, q.ID)
	if !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("a question purged while it was read: %+v, %v; want not found", got, err)
	}
}

// purgeHook, once armed, deletes a question's keys inside the next
// pipeline that reads its resolution, just before that read, as a purge
// by another client served in between would.
type purgeHook struct{ armed *atomic.Bool }

func (purgeHook) DialHook(next goredis.DialHook) goredis.DialHook          { return next }
func (purgeHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook { return next }

func (h purgeHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		if !h.armed.Load() {
			return next(ctx, cmds)
		}
		var with []goredis.Cmder
		for _, c := range cmds {
			args := c.Args()
			if key, ok := args[len(args)-1].(string); ok && c.Name() == "get" && strings.Contains(key, ":r:") && h.armed.Swap(false) {
				with = append(with, goredis.NewIntCmd(ctx, "del", strings.Replace(key, ":r:", ":q:", 1),
					strings.Replace(key, ":r:", ":d:", 1), key))
			}
			with = append(with, c)
		}
		return next(ctx, with)
	}
}

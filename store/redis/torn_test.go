package redis_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
	redisstore "github.com/askbridge/askbridge/store/redis"
	"github.com/askbridge/askbridge/store/storetest"
)

// tearing is a client hook that, once armed, sends a pipeline that
// begins with an HGETALL in two parts, running between them what another
// client does: as Redis serves a pipeline longer than it reads at once.
type tearing struct {
	between atomic.Pointer[func()]
}

func (h *tearing) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h *tearing) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook { return next }

func (h *tearing) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		f := h.between.Load()
		if f == nil || len(cmds) < 2 || cmds[0].Name() != "hgetall" || !h.between.CompareAndSwap(f, nil) {
			return next(ctx, cmds)
		}
		if err := next(ctx, cmds[:1]); err != nil {
			return err
		}
		(*f)()
		return next(ctx, cmds[1:])
	}
}

// TestReadTornByACloseReadsAgain: a read whose question closes between
// its hash's read and its document's (another client's close served
// between two parts of the pipeline) reads the question again, at one
// moment, and gets it closed; before, it got the question open with a
// resolution.
func TestReadTornByACloseReadsAgain(t *testing.T) {
	prefix := randomPrefix()
	h := &tearing{}
	c := goredis.NewClient(&goredis.Options{Addr: server.Addr()})
	c.AddHook(h)
	t.Cleanup(func() { _ = c.Close() })
	a, b := newStoreOn(t, c, redisstore.Options{Prefix: prefix}), newStore(t, redisstore.Options{Prefix: prefix})
	q := question(0, "run-1", t0)
	mustCreate(t, b, q)
	closeIt := func() {
		if _, err := b.Resolve(t.Context(), answer(q, "ada", t0)); err != nil {
			t.Error(err)
		}
	}
	h.between.Store(&closeIt)
	got, err := a.Get(t.Context(), q.ID)
	if h.between.Load() != nil {
		t.Fatal("the read was not torn: the test tests nothing")
	}
	if err != nil || got.Open() || got.State != core.StateAnswered || got.Resolution == nil {
		t.Fatalf("a read torn by a close: %+v, %v; want the question closed", got, err)
	}
}

// failingAfterNil is a client hook that, once armed, has the next
// pipeline of HGETs answer its first with Nil (a gone question) and its
// second with an error, as a command of a pipeline can fail alone.
type failingAfterNil struct{ armed atomic.Bool }

func (h *failingAfterNil) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h *failingAfterNil) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook { return next }

func (h *failingAfterNil) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		err := next(ctx, cmds)
		if len(cmds) >= 2 && cmds[0].Name() == "hget" && h.armed.CompareAndSwap(true, false) {
			cmds[0].SetErr(goredis.Nil)
			cmds[1].SetErr(errors.New("LOADING Redis is loading the dataset in memory"))
		}
		return err
	}
}

// TestDueTellsACommandsFailure: Due whose read of the questions' states
// fails for one question, after another read as gone, fails; before, the
// failing question was left out of the page with no error.
func TestDueTellsACommandsFailure(t *testing.T) {
	h := &failingAfterNil{}
	c := goredis.NewClient(&goredis.Options{Addr: server.Addr()})
	c.AddHook(h)
	t.Cleanup(func() { _ = c.Close() })
	s := newStoreOn(t, c, redisstore.Options{})
	for _, run := range []core.RunID{"run-1", "run-2"} {
		mustCreate(t, s, question(0, run, t0))
	}
	h.armed.Store(true)
	ids, err := s.Due(t.Context(), t0.Add(2*time.Hour), 10)
	if h.armed.Load() {
		t.Fatal("no read failed: the test tests nothing")
	}
	if err == nil {
		t.Fatalf("Due with a failed read: %v and no error", ids)
	}
}

// TestStoreKeepsItsShardCount: a store is reopened only with the shard
// count it was made with; another is refused, naming both, and changes
// nothing. Before, it opened, and questions of the shards it no longer had
// read as unknown.
func TestStoreKeepsItsShardCount(t *testing.T) {
	prefix := randomPrefix()
	made := newStore(t, redisstore.Options{Prefix: prefix, Shards: 2})
	q := question(1, "run-1", t0)
	mustCreate(t, made, q)
	c := goredis.NewClient(&goredis.Options{Addr: server.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	if _, err := redisstore.New(t.Context(), c, redisstore.Options{Prefix: prefix, Shards: 1}); err == nil ||
		!strings.Contains(err.Error(), "holds a store of 2 shards, and it is opened with 1") {
		t.Fatalf("opened with 1 shard a store of 2: %v", err)
	}
	again := newStore(t, redisstore.Options{Prefix: prefix, Shards: 2})
	if got := mustGet(t, again, q.ID); got.ID != q.ID {
		t.Fatalf("reopened as made: %+v", got)
	}
}

// TestPurgePlansAgainWhenItsRunsChange: a purge plans the runs its
// checkpoint will carry under the key, then purges; an event that comes
// to a candidate between the two (a card recorded late) changes the runs,
// so the purge changes nothing and plans again, and the log still
// verifies, the late event inside the checkpoint's runs.
func TestPurgePlansAgainWhenItsRunsChange(t *testing.T) {
	s := newStore(t, redisstore.Options{AuditKey: audit.Key(storetest.AuditKey)})
	q := question(0, "run-1", t0)
	mustCreate(t, s, q)
	if _, err := s.Resolve(t.Context(), answer(q, "ada", t0)); err != nil {
		t.Fatal(err)
	}
	var purges atomic.Int32
	var late sync.Once
	prev := redisstore.SetScriptHook(func(name string, _ []string) {
		if name != "purge" || purges.Add(1) != 2 {
			return
		}
		late.Do(func() { // between the plan and the purge
			ref := core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: "9.9", Delivery: string(q.ID) + ":post:slack:C1", Kind: core.DeliverPost, At: t0}
			if err := s.RecordMessage(t.Context(), q.ID, ref, core.Event{QuestionID: q.ID, At: t0, Kind: core.EventNotified}); err != nil {
				t.Error(err)
			}
		})
	})
	defer redisstore.SetScriptHook(prev)
	if n, err := s.Purge(t.Context(), t0.Add(time.Hour), 0); err != nil || n != 1 {
		t.Fatalf("purge: %d, %v", n, err)
	}
	if n := purges.Load(); n != 3 {
		t.Fatalf("the purge script ran %d times; want a plan, a purge refused, and a purge", n)
	}
	rep, err := audit.Verify(audit.Key(storetest.AuditKey), audit.StoreWalk(t.Context(), s), audit.Options{})
	if err != nil || rep.Break != nil || rep.Checkpoints != 1 || rep.Events != 1 {
		t.Fatalf("after the purge: %+v, %v", rep, err)
	}
}

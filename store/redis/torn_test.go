package redis_test

import (
	"context"
	"sync/atomic"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
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

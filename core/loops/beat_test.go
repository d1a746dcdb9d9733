package loops_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

// heldTick is a store whose reads of the questions due (the ticker's
// pass) wait until release is closed, as a tick over many closes (a
// run's ending cut short, finished by the ticker) or a store's
// failover holds the ticker, and that counts its heartbeats.
type heldTick struct {
	core.Store
	held     chan struct{} // closed when the first read of the due is waiting
	heldOnce sync.Once
	release  chan struct{}
	beats    atomic.Int32
}

func (s *heldTick) Due(ctx context.Context, now time.Time, limit int) ([]core.QuestionID, error) {
	s.heldOnce.Do(func() { close(s.held) })
	select {
	case <-s.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Store.Due(ctx, now, limit)
}

func (s *heldTick) Beat(ctx context.Context, now time.Time) (time.Time, error) {
	s.beats.Add(1)
	return s.Store.Beat(ctx, now)
}

// TestASlowTickHoldsUpNoBeat: while a tick is held in the store, the
// heartbeat still beats. Before, Run's one select ran the tick and the
// beat in turn, so a tick that took longer than the downtime threshold
// left the beat that long stale, and a replica booting meanwhile (a
// rolling deploy) took it for a downtime: it re-notified every open
// question and posted "while you were away" digests for a bridge that
// had been up all along (law 8).
func TestASlowTickHoldsUpNoBeat(t *testing.T) {
	st := &heldTick{Store: coretest.OpenStore(t), held: make(chan struct{}), release: make(chan struct{})}
	svc := coretest.Service(t, st, coretest.Options{})
	startRun(t, svc, loops.Intervals{Tick: 5 * time.Millisecond, Heartbeat: 5 * time.Millisecond})
	t.Cleanup(func() {
		select {
		case <-st.release:
		default:
			close(st.release) // before startRun's cleanup cancels Run
		}
	})
	within(t, st.held, "the tick never reached the store")
	beats := st.beats.Load()
	waitFor(t, "a heartbeat while the tick waits in the store", func() bool { return st.beats.Load() > beats })
	close(st.release)
}

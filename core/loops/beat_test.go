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

// beatsAt is a store that hands each heartbeat's time to at.
type beatsAt struct {
	core.Store
	at chan time.Time
}

func (s *beatsAt) Beat(ctx context.Context, now time.Time) (time.Time, error) {
	prev, err := s.Store.Beat(ctx, now)
	s.at <- now
	return prev, err
}

// TestRunBeatsAsItStarts: Run's first heartbeat is at its start, not
// one interval after. serve boots, then starts its surfaces, then Run;
// before, the beat after Boot's came a whole interval after that slow
// start-up, and with the downtime threshold at its minimum (twice the
// interval, which assumes no gap longer than one) a replica booting
// meanwhile, or this one restarted quickly, took a bridge that was
// serving for one that had been away, and re-notified every open
// question (law 8).
func TestRunBeatsAsItStarts(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	st := &beatsAt{Store: coretest.OpenStore(t), at: make(chan time.Time, 16)}
	conf := core.Config{Routes: coretest.APIRoutes(), ActorKey: []byte(coretest.ActorKey),
		DowntimeThreshold: 2 * core.HeartbeatInterval}
	svc, err := core.New(st, conf, clock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	<-st.at
	clock.Advance(core.HeartbeatInterval + time.Second) // the surfaces starting
	// Intervals of an hour: the only beat within the test is the one at
	// Run's start.
	startRun(t, svc, loops.Intervals{Tick: time.Hour, Heartbeat: time.Hour, Purge: time.Hour, Remind: time.Hour})
	if got, want := within(t, st.at, "no heartbeat as Run started"), clock.Now(); !got.Equal(want) {
		t.Fatalf("Run's first beat at %s, want %s (as it started)", got, want)
	}
	// Past the threshold since Boot's beat, within it since Run's first.
	clock.Advance(core.HeartbeatInterval)
	other, err := core.New(st, conf, clock)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := other.Boot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Down != 0 {
		t.Fatalf("a replica booting %s after Run started saw a downtime of %s", core.HeartbeatInterval, rep.Down)
	}
}

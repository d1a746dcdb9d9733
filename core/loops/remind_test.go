package loops_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

// heldReminders is a store whose reminder claims (core's "remind:"
// leases) wait until release is closed, as a pass over thousands of due
// questions keeps the store busy, and that counts its heartbeats.
type heldReminders struct {
	core.Store
	held     chan struct{} // closed when the first claim is waiting
	heldOnce sync.Once
	release  chan struct{}
	beats    atomic.Int32
}

func (s *heldReminders) Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	if strings.HasPrefix(key, "remind:") {
		s.heldOnce.Do(func() { close(s.held) })
		select {
		case <-s.release:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	return s.Store.Lease(ctx, key, owner, ttl)
}

func (s *heldReminders) Beat(ctx context.Context, now time.Time) (time.Time, error) {
	s.beats.Add(1)
	return s.Store.Beat(ctx, now)
}

// TestASlowReminderPassHoldsUpNoTickOrBeat: while a reminder pass is
// held in the store, the ticker still times questions out and the
// heartbeat still beats, and the pass finishes once the store lets it.
// Before, Run's one select ran the pass, the tick and the beat in turn,
// so a pass over thousands of due questions (the first after a long
// downtime, two fsync'd writes each on the embedded store) held up every
// timeout and heartbeat until it ended.
func TestASlowReminderPassHoldsUpNoTickOrBeat(t *testing.T) {
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	st := &heldReminders{Store: coretest.OpenStore(t), held: make(chan struct{}), release: make(chan struct{})}
	routes := coretest.APIRoutes()
	routes["nag"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}, RemindEvery: time.Hour}
	svc := coretest.Service(t, st, coretest.Options{Routes: routes, Clock: clock})
	ask := func(route string, timeout time.Duration) *core.Question {
		q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which?",
			Reversibility: core.Reversible, Route: route, Timeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	reminded := ask("nag", 24*time.Hour)
	timesOut := ask(core.DefaultRoute, 2*time.Hour)
	clock.Advance(time.Hour + time.Minute) // reminded's first reminder is due; timesOut is not yet
	startRun(t, svc, loops.Intervals{Tick: 5 * time.Millisecond, Heartbeat: 5 * time.Millisecond, Remind: 5 * time.Millisecond})
	t.Cleanup(func() {
		select {
		case <-st.release:
		default:
			close(st.release) // before startRun's cleanup cancels Run
		}
	})

	waitFor(t, "the reminder pass to wait in the store", func() bool {
		select {
		case <-st.held:
			return true
		default:
			return false
		}
	})
	clock.Advance(time.Hour) // timesOut's deadline passes while the pass waits
	beats := st.beats.Load()
	waitFor(t, "a timeout while the reminder pass waits", func() bool {
		got, err := svc.Get(t.Context(), timesOut.ID)
		return err == nil && got.State == core.StateTimedOut
	})
	waitFor(t, "a heartbeat while the reminder pass waits", func() bool { return st.beats.Load() > beats })

	close(st.release)
	waitFor(t, "the reminder once the store lets it through", func() bool {
		for _, e := range coretest.EventsOf(t, svc, reminded.ID) {
			if e.Kind == core.EventReminded {
				return true
			}
		}
		return false
	})
}

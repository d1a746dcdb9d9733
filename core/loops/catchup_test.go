package loops_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/store/bolt"
)

// awayReads is the embedded store counting the reads of the catch-up's
// record (core's "core:away" value) once each has its answer.
type awayReads struct {
	*bolt.Store
	reads atomic.Int32
}

func (s *awayReads) Value(ctx context.Context, key string) (string, error) {
	v, err := s.Store.Value(ctx, key)
	if key == "core:away" {
		s.reads.Add(1)
	}
	return v, err
}

// TestACatchUpLeftByAnotherReplicaIsFinished: a replica whose own
// catch-up found nothing to do (it booted beside another, which found
// the downtime) still finishes the catch-up that the other recorded and
// never worked through (it died, or was stopped by the rolling deploy):
// the open question is re-notified. Before, the loop returned once its
// first call found no record, and the downtime's re-notices waited for
// some replica to restart, if one ever did.
func TestACatchUpLeftByAnotherReplicaIsFinished(t *testing.T) {
	clock := core.NewSimClock(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	st := &awayReads{Store: coretest.OpenStore(t)}
	opts := coretest.Options{Clock: clock, Routes: map[string]core.Route{"ops": {
		Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}}, Deciders: map[core.Surface][]string{core.SurfaceSlack: {"U1"}},
	}}}
	a, b := coretest.Service(t, st, opts), coretest.Service(t, st, opts)
	ctx := t.Context()
	q := askOps(t, a, "toolu_1")

	// b is up, and its catch-up has found nothing to do.
	if _, err := b.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	startRun(t, b, loops.Intervals{Tick: 10 * time.Millisecond, Heartbeat: time.Hour, Remind: time.Hour, Purge: time.Hour})
	waitFor(t, "b's first catch-up", func() bool { return st.reads.Load() >= 1 })

	// a boots after a downtime, records it, and goes away before it
	// re-notifies anyone.
	clock.Advance(10 * time.Minute) // past the downtime threshold, short of the question's deadline
	if rep, err := a.Boot(ctx); err != nil || rep.Down == 0 {
		t.Fatalf("a's boot: %+v, %v; want a downtime recorded", rep, err)
	}
	waitFor(t, "b's re-notice of the question the downtime left waiting", func() bool {
		for _, e := range coretest.EventsOf(t, b, q.ID) {
			if e.Kind == core.EventReminded {
				return true
			}
		}
		return false
	})
}

package loops_test

import (
	"context"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

// askAndTimeOut asks a question with an hour's timeout and closes it by
// that timeout, moving clock on past its deadline.
func askAndTimeOut(t *testing.T, svc *core.Service, clock *core.SimClock, text string) *core.Question {
	t.Helper()
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: text,
		Reversibility: core.Reversible, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour + time.Second)
	if _, err := svc.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	return q
}

// startRun runs loops.Run with l until the test ends.
func startRun(t *testing.T, svc *core.Service, l loops.Intervals) {
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- loops.Run(ctx, svc, l, func(err error) { t.Errorf("pass failed: %v", err) }) }()
	t.Cleanup(func() { cancel(); <-ran })
}

// purged says whether q is gone from the store.
func purged(t *testing.T, svc *core.Service, q *core.Question) bool {
	_, err := svc.Get(t.Context(), q.ID)
	return core.ErrorCode(err) == core.CodeNotFound
}

// TestRunPurgesSoonAfterStart: Run purges once soon after it starts, not
// one Intervals.Purge (an hour) later. Before, a bridge restarted more
// often than hourly (a crash loop, frequent deploys) never purged, and
// kept every closed question past retention.
func TestRunPurgesSoonAfterStart(t *testing.T) {
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	svc, _ := coretest.Open(t, coretest.Options{Clock: clock})
	old := askAndTimeOut(t, svc, clock, "old")
	clock.Advance(core.DefaultRetention + time.Hour)
	startRun(t, svc, loops.Intervals{Tick: time.Hour})
	waitFor(t, "the purge of a question closed past retention", func() bool { return purged(t, svc, old) })
}

// TestRunPurgesEveryInterval: after the purge at start Run purges again
// every Intervals.Purge, each time what has passed retention since.
func TestRunPurgesEveryInterval(t *testing.T) {
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	svc, _ := coretest.Open(t, coretest.Options{Clock: clock})
	first := askAndTimeOut(t, svc, clock, "first")
	second := askAndTimeOut(t, svc, clock, "second")   // closed an hour after first
	clock.Advance(core.DefaultRetention - time.Minute) // first is past retention, second not yet
	startRun(t, svc, loops.Intervals{Tick: time.Hour, Purge: 10 * time.Millisecond})
	waitFor(t, "the purge of the first question", func() bool { return purged(t, svc, first) })
	if purged(t, svc, second) {
		t.Fatal("the second question was purged before its retention ended")
	}
	clock.Advance(time.Hour)
	waitFor(t, "the purge of the second question", func() bool { return purged(t, svc, second) })
}

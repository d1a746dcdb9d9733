package metrics_test

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/metrics"
	"github.com/askbridge/askbridge/core"
)

// TestSkewedClocksNeverLowerASum: a question's ask time comes from the
// replica that parked it, its close time from the one that closed it,
// and a wake is timed by the waiter's replica against the close time, so
// a clock a few milliseconds behind another's makes these durations
// negative. A histogram's _sum must never fall: rate() reads a fall as a
// counter reset, and the average wait or answer time on the dashboard
// jumps. Such a duration counts as 0, in the first bucket; before, it
// lowered the sum.
func TestSkewedClocksNeverLowerASum(t *testing.T) {
	m := metrics.New("dev", metrics.Source{})
	m.Woke(-3 * time.Millisecond)
	m.Closed(&core.Question{Kind: core.KindClarification, Route: "ops", CreatedAt: t0, State: core.StateAnswered,
		Resolution: &core.Resolution{State: core.StateAnswered, At: t0.Add(-20 * time.Millisecond),
			ClosedBy: core.CloserPerson, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"}}})
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range fams {
		if f.GetName() != "askbridge_answer_to_wake_seconds" && f.GetName() != "askbridge_time_to_answer_seconds" {
			continue
		}
		for _, s := range f.GetMetric() {
			h := s.GetHistogram()
			seen++
			if h.GetSampleCount() != 1 || h.GetSampleSum() != 0 || h.GetBucket()[0].GetCumulativeCount() != 1 {
				t.Errorf("%s: count %d, sum %v, first bucket %d; want 1, 0 and 1",
					f.GetName(), h.GetSampleCount(), h.GetSampleSum(), h.GetBucket()[0].GetCumulativeCount())
			}
		}
	}
	if seen != 2 {
		t.Fatalf("%d histograms observed, want the wake's and the answer's", seen)
	}
}

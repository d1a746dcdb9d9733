package core_test

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestATimeoutWhileAwaySaysSo: a question whose deadline passed while
// askbridge was not running times out at the first tick after the boot,
// and its recorded reason, its card and its resume say that the deadline
// passed while askbridge was down, when no answer could be taken; one
// whose deadline passes after the boot times out as any other. Before,
// both read "nobody answered before the deadline", which blamed the
// people for the bridge's absence.
func TestATimeoutWhileAwaySaysSo(t *testing.T) {
	d := newDowntime(t)
	missed := d.ask(time.Hour, core.OnTimeoutDeny)
	later := d.ask(3*time.Hour, core.OnTimeoutDeny)
	d.clock.Advance(10 * time.Minute)
	d.away(2 * time.Hour)
	ctx := t.Context()
	if _, err := d.svc.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.svc.CatchUp(ctx, "a"); err != nil {
		t.Fatal(err) // clears the catch-up record before the tick, as it may
	}
	d.clock.Advance(time.Second)
	if tr, err := d.svc.Tick(ctx); err != nil || tr.TimedOut != 1 {
		t.Fatalf("tick: %+v, %v", tr, err)
	}
	const away = "while askbridge was not running (for 2h0m0s), when no answer could be taken"
	q := d.get(missed.ID)
	if q.State != core.StateTimedOut || q.Resolution.Away == nil || !strings.Contains(q.Resolution.Reason, away) {
		t.Fatalf("the question that timed out while away: %s, %+v", q.State, q.Resolution)
	}
	if line := card.OutcomeLine(q); !strings.Contains(line, away) {
		t.Errorf("its card: %q", line)
	}
	if res, err := core.ResumeOf(q); err != nil || !strings.Contains(res.Text, away) {
		t.Errorf("its resume: %q, %v", res.Text, err)
	}

	d.clock.Advance(time.Hour)
	if tr, err := d.svc.Tick(ctx); err != nil || tr.TimedOut != 1 {
		t.Fatalf("tick: %+v, %v", tr, err)
	}
	q = d.get(later.ID)
	if q.State != core.StateTimedOut || q.Resolution.Away != nil || q.Resolution.Reason != core.TimeoutReason {
		t.Fatalf("the question that timed out after the boot: %s, %+v", q.State, q.Resolution)
	}
	if line := card.OutcomeLine(q); strings.Contains(line, "not running") {
		t.Errorf("its card: %q", line)
	}
}

// get reads question id as stored.
func (d downtime) get(id core.QuestionID) *core.Question {
	d.t.Helper()
	q, err := d.st.Get(d.t.Context(), id)
	if err != nil {
		d.t.Fatal(err)
	}
	return q
}

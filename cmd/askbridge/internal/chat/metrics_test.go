package chat

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	dto "github.com/prometheus/client_model/go"
)

// noIDs fails if any askbridge label value is a question id or a platform
// user id: labels must stay low-cardinality.
func noIDs(t *testing.T, fams map[string]*dto.MetricFamily, people ...string) {
	t.Helper()
	for name, f := range fams {
		if !strings.HasPrefix(name, "askbridge_") {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				v := l.GetValue()
				bad := core.ValidID(core.QuestionID(v))
				for _, p := range people {
					bad = bad || strings.Contains(v, p)
				}
				if bad {
					t.Errorf("%s has label %s=%q: an id in a label", name, l.GetName(), v)
				}
			}
		}
	}
}

// metricsDriver runs the shared chat scenarios through another driver and,
// after each one, scrapes the program's /metrics with the operator token
// and checks that the counters moved as the scenario says.
type metricsDriver struct {
	adaptertest.Driver
	prog adaptertest.Program
	gen  int // which program (a restart starts a new one, with new counters)
}

func (d *metricsDriver) Start(t *testing.T, clock core.Clock) adaptertest.Program {
	d.prog = d.Driver.Start(t, clock)
	d.checkAtEnd(t)
	return d.prog
}

func (d *metricsDriver) Restart(t *testing.T, whileDown func()) adaptertest.Program {
	d.prog = d.Driver.Restart(t, whileDown)
	d.checkAtEnd(t)
	return d.prog
}

// checkAtEnd checks the latest program when the scenario ends, while it
// still runs (cleanups run last-registered first).
func (d *metricsDriver) checkAtEnd(t *testing.T) {
	d.gen++
	gen := d.gen
	t.Cleanup(func() {
		if !t.Failed() && gen == d.gen {
			d.check(t)
		}
	})
}

// eventually scrapes until ok holds: deliveries are counted just after the
// platform saw them, so the scenario can finish a moment before.
func (d *metricsDriver) eventually(t *testing.T, what string, ok func(map[string]*dto.MetricFamily) bool) map[string]*dto.MetricFamily {
	t.Helper()
	fams, held := apptest.ScrapeUntil(t, d.prog.URL, d.prog.OperatorToken, ok)
	if !held {
		t.Errorf("%s: never true; /metrics has %v", what, apptest.Summary(fams))
	}
	return fams
}

func (d *metricsDriver) check(t *testing.T) {
	s := string(d.Surface())
	people := []string{d.Allowed().ID, d.Allowed2().ID, d.Stranger().ID}
	name := t.Name()[strings.LastIndex(t.Name(), "/")+1:]
	eq := func(fams map[string]*dto.MetricFamily, want float64, metric string, labels ...string) {
		t.Helper()
		if got := apptest.Value(fams, metric, labels...); got != want {
			t.Errorf("%s: %s%v = %v, want %v", name, metric, labels, got, want)
		}
	}
	var fams map[string]*dto.MetricFamily
	switch name {
	case "1_ClickWakesAgentAndEditsCard":
		// Posted, then edited once it closed.
		fams = d.eventually(t, "post and edit sent", func(f map[string]*dto.MetricFamily) bool {
			return apptest.Value(f, "askbridge_deliveries_total", "surface", s, "result", core.DeliverySent) >= 2
		})
		eq(fams, 1, "askbridge_questions_asked_total", "kind", "decision", "route", "ops", "reversibility", "hard_to_reverse")
		eq(fams, 1, "askbridge_questions_closed_total", "state", "answered", "surface", s)
		eq(fams, 1, "askbridge_time_to_answer_seconds", "kind", "decision", "route", "ops", "state", "answered")
		eq(fams, 1, "askbridge_resolve_duration_seconds", "result", core.ResolveClosed)
		eq(fams, 1, "askbridge_answer_to_wake_seconds")
		eq(fams, 0, "askbridge_open_questions")
		eq(fams, 0, "askbridge_parked_waits")
		eq(fams, 0, "askbridge_deliveries_total", "result", core.DeliveryGivenUp)
	case "3_UnauthorisedClick":
		fams = apptest.Scrape(t, d.prog.URL, d.prog.OperatorToken)
		eq(fams, 1, "askbridge_refusals_total", "door", "answer", "reason", core.RefusedForbidden)
		eq(fams, 1, "askbridge_resolve_duration_seconds", "result", core.ResolveRefused)
		eq(fams, 0, "askbridge_questions_closed_total")
		eq(fams, 1, "askbridge_open_questions", "route", "ops", "reversibility", "hard_to_reverse")
	case "4_DoubleAndConcurrentClicks":
		fams = apptest.Scrape(t, d.prog.URL, d.prog.OperatorToken)
		eq(fams, 1, "askbridge_questions_closed_total", "state", "answered", "surface", s)
		eq(fams, 1, "askbridge_resolve_duration_seconds", "result", core.ResolveClosed)
		// The other person's click and the winner's second click lost.
		lost := apptest.Value(fams, "askbridge_resolve_duration_seconds", "result", core.ResolveLost)
		if lost < 2 {
			t.Errorf("%s: %v lost attempts, want at least 2", name, lost)
		}
		eq(fams, lost, "askbridge_refusals_total", "door", "answer", "reason", core.RefusedClosed)
	case "7_ClickAfterRunEnded":
		fams = apptest.Scrape(t, d.prog.URL, d.prog.OperatorToken)
		eq(fams, 1, "askbridge_questions_closed_total", "state", "expired", "surface", "system")
		eq(fams, 1, "askbridge_time_to_answer_seconds", "state", "expired")
		eq(fams, 1, "askbridge_refusals_total", "door", "answer", "reason", core.RefusedExpired)
	case "8_AnsweredOnAnotherSurface":
		fams = apptest.Scrape(t, d.prog.URL, d.prog.OperatorToken)
		eq(fams, 1, "askbridge_questions_closed_total", "state", "answered", "surface", "api")
		eq(fams, 0, "askbridge_questions_closed_total", "surface", s)
	default:
		fams = apptest.Scrape(t, d.prog.URL, d.prog.OperatorToken)
	}
	noIDs(t, fams, people...)
	// Only single connections' leases are counted, not core's posting marks.
	for _, m := range fams["askbridge_leases_held"].GetMetric() {
		if l := m.GetLabel()[0].GetValue(); l != "telegram" && l != "discord" {
			t.Errorf("%s: leases_held{lease=%q}", name, l)
		}
	}
}

func TestMetricsAfterSlackScenarios(t *testing.T) {
	t.Parallel() // mostly waits on the room's send budget
	adaptertest.Run(t, &metricsDriver{Driver: &apptest.SlackDriver{}})
}

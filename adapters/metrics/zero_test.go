package metrics_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/metrics"
	"github.com/askbridge/askbridge/core"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestAskedShowsAtZeroForConfiguredRoutes: every kind and reversibility
// of every configured route is a series from the start, and a route a
// reload adds is one from the reload. Before, questions_asked_total had
// no series until the first ask on it, so increase() and rate() over a
// window with a restart in it never counted the first ask after the
// restart (a series that appears has nothing to increase from).
func TestAskedShowsAtZeroForConfiguredRoutes(t *testing.T) {
	m := metrics.New("dev", metrics.Source{Routes: []string{"ops"}})
	m.Reloaded(true, []string{"ops", "billing"})
	m.Reloaded(false, []string{"refused-route"})
	var want strings.Builder
	want.WriteString(`
# HELP askbridge_questions_asked_total Questions parked, by kind, route and reversibility (repeats of an ask are not counted).
# TYPE askbridge_questions_asked_total counter
`)
	for _, k := range []string{"approval", "clarification", "decision", "form"} {
		for _, route := range []string{"billing", "ops"} {
			for _, rev := range []string{"hard_to_reverse", "reversible"} {
				want.WriteString(`askbridge_questions_asked_total{kind="` + k + `",reversibility="` + rev + `",route="` + route + `"} 0` + "\n")
			}
		}
	}
	if err := testutil.GatherAndCompare(m.Gatherer(), strings.NewReader(want.String()), "askbridge_questions_asked_total"); err != nil {
		t.Error(err)
	}
}

// TestClosedShowsAtZeroFromTheStart: every state a question closes in
// shows, from the start, with each surface that can close it that way
// (core.ClosingSurface): a person's answer or decline on any surface a
// person answers through, the bridge's policy rules and standing
// approvals, timeouts and expiry, an agent's or an operator's cancel.
// Before, questions_closed_total had no series at all until the first
// close after a (re)start, which increase() and rate() then missed.
// Combinations that cannot happen stay out, so the series stay few.
func TestClosedShowsAtZeroFromTheStart(t *testing.T) {
	got := closedSeries(t, metrics.New("dev", metrics.Source{}))
	want := map[[2]string]bool{
		{"timed_out", "system"}: true, {"expired", "system"}: true, {"answered", "system"}: true,
		{"cancelled", "agent"}: true, {"cancelled", "api"}: true, {"cancelled", "console"}: true, {"cancelled", "system"}: true,
	}
	for _, s := range core.AnswerSurfaces {
		want[[2]string{"answered", string(s)}] = true
		want[[2]string{"declined", string(s)}] = true
	}
	for k := range want {
		if v, ok := got[k]; !ok || v != 0 {
			t.Errorf("questions_closed_total{state=%q,surface=%q}: shown %v, value %v; want shown at 0", k[0], k[1], ok, v)
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("questions_closed_total{state=%q,surface=%q} is shown, but nothing closes a question that way", k[0], k[1])
		}
	}
}

// closedSeries is questions_closed_total as gathered, by state and
// surface.
func closedSeries(t *testing.T, m *metrics.Metrics) map[[2]string]float64 {
	t.Helper()
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[[2]string]float64{}
	for _, f := range fams {
		if f.GetName() != "askbridge_questions_closed_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			got[[2]string{labels["state"], labels["surface"]}] = s.GetCounter().GetValue()
		}
	}
	return got
}

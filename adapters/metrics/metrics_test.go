package metrics_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/metrics"
	"github.com/askbridge/askbridge/core"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// outbox is a store's outbox gauge as a table.
type outbox map[core.Surface]core.OutboxStat

func (o outbox) OutboxStat(_ context.Context, s core.Surface) (core.OutboxStat, error) {
	if st, ok := o[s]; ok {
		return st, nil
	}
	return core.OutboxStat{}, errors.New("unreachable")
}

// The exposition is what a scraper reads: compare the lines for the
// metrics that the observations touched.
func TestObservationsAndGauges(t *testing.T) {
	m := metrics.New("v1.2.3", metrics.Source{
		Routes:   []string{"ops"},
		Outbox:   outbox{core.SurfaceSlack: {Depth: 3, Oldest: t0.Add(-90 * time.Second)}, core.SurfaceTelegram: {}},
		Surfaces: []core.Surface{core.SurfaceSlack, core.SurfaceTelegram},
		Now:      func() time.Time { return t0 },
	})
	m.SetOpen(func(context.Context, string, int) ([]*core.Question, string, error) {
		return []*core.Question{{Route: "ops", Reversibility: core.HardToReverse}, {Route: "ops"}}, "", nil
	})
	q := &core.Question{Kind: core.KindApproval, Route: "ops", Reversibility: core.Reversible, CreatedAt: t0,
		State: core.StateAnswered, Resolution: &core.Resolution{State: core.StateAnswered, At: t0.Add(40 * time.Second),
			Decider: core.Decider{Surface: core.SurfaceSlack, ID: "U123", Name: "Alice"}}}
	m.Asked(q)
	m.Closed(q)
	// A standing approval closed this one at the ask: the bridge did,
	// not its granter's Slack account.
	m.Closed(&core.Question{Kind: core.KindApproval, Route: "ops", CreatedAt: t0, State: core.StateAnswered,
		Resolution: &core.Resolution{State: core.StateAnswered, At: t0, ClosedBy: core.CloserStanding,
			Decider:  core.Decider{Surface: core.SurfaceSlack, ID: "U123", Name: "standing approval by Alice"},
			Standing: &core.StandingUse{ID: "st-1", GrantedBy: core.Decider{Surface: core.SurfaceSlack, ID: "U123"}, GrantedAt: t0}}})
	denied := &core.Question{Kind: core.KindApproval, Route: "ops", Reversibility: core.Reversible,
		Rule: &core.RuleUse{Route: "ops", Index: 3, Decide: core.DecideDeny}}
	m.Asked(denied)
	m.Asked(denied)
	m.Delivered(core.SurfaceSlack, core.DeliveryRateLimited, 2*time.Second)
	m.Delivered(core.SurfaceSlack, core.DeliverySent, 0)
	m.Refused("answer", core.RefusedForbidden)

	want := `
# HELP askbridge_policy_decisions_total Asks (and calls of a batch) a route's policy rule decided, by route, rule (its index, from 0) and decision (allow, deny, ask).
# TYPE askbridge_policy_decisions_total counter
askbridge_policy_decisions_total{decision="deny",route="ops",rule="3"} 2
# HELP askbridge_open_questions Open questions in the store, by route and reversibility.
# TYPE askbridge_open_questions gauge
askbridge_open_questions{reversibility="hard_to_reverse",route="ops"} 1
askbridge_open_questions{reversibility="reversible",route="ops"} 0
askbridge_open_questions{reversibility="unclassified",route="ops"} 1
# HELP askbridge_outbox_depth Deliveries waiting in the store's outbox, by surface.
# TYPE askbridge_outbox_depth gauge
askbridge_outbox_depth{surface="slack"} 3
askbridge_outbox_depth{surface="telegram"} 0
# HELP askbridge_outbox_oldest_age_seconds Age of the oldest delivery waiting in the outbox, by surface (0 when empty).
# TYPE askbridge_outbox_oldest_age_seconds gauge
askbridge_outbox_oldest_age_seconds{surface="slack"} 90
askbridge_outbox_oldest_age_seconds{surface="telegram"} 0
# HELP askbridge_store_scrape_errors 1 when reading the store for this scrape failed (the store gauges are then missing).
# TYPE askbridge_store_scrape_errors gauge
askbridge_store_scrape_errors 0
`
	if err := testutil.GatherAndCompare(m.Gatherer(), strings.NewReader(want),
		"askbridge_policy_decisions_total", "askbridge_open_questions", "askbridge_outbox_depth",
		"askbridge_outbox_oldest_age_seconds", "askbridge_store_scrape_errors"); err != nil {
		t.Error(err)
	}
	// The other closings show at zero (zero_test.go).
	closed := closedSeries(t, m)
	if closed[[2]string{"answered", "slack"}] != 1 || closed[[2]string{"answered", "system"}] != 1 {
		t.Errorf("closed by slack %v, by the system %v; want 1 and 1", closed[[2]string{"answered", "slack"}], closed[[2]string{"answered", "system"}])
	}
	fams := gather(t, m)
	if c := fams["askbridge_questions_closed_total"]; c != 2 {
		t.Errorf("closes counted: %v, want 2", c)
	}
	if h := fams["askbridge_time_to_answer_seconds"]; h != 2 {
		t.Errorf("time to answer observations: %v", h)
	}
	if h := fams["askbridge_platform_retry_after_seconds"]; h != 1 {
		t.Errorf("retry-after observations: %v", h)
	}
}

// A store that cannot be read says so, and its gauges are left out rather
// than shown as zero.
func TestStoreUnreadable(t *testing.T) {
	m := metrics.New("dev", metrics.Source{Outbox: outbox{}, Surfaces: []core.Surface{core.SurfaceSlack}})
	m.SetOpen(func(context.Context, string, int) ([]*core.Question, string, error) {
		return nil, "", errors.New("down")
	})
	fams := gather(t, m)
	if fams["askbridge_store_scrape_errors"] != 1 {
		t.Errorf("scrape errors: %v", fams["askbridge_store_scrape_errors"])
	}
	for _, name := range []string{"askbridge_open_questions", "askbridge_outbox_depth"} {
		if _, ok := fams[name]; ok {
			t.Errorf("%s is reported though the store could not be read", name)
		}
	}
}

// gather sums each family's series: a value, or a histogram's count.
func gather(t *testing.T, m *metrics.Metrics) map[string]float64 {
	t.Helper()
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, s := range f.GetMetric() {
			switch {
			case s.Counter != nil:
				out[f.GetName()] += s.Counter.GetValue()
			case s.Gauge != nil:
				out[f.GetName()] += s.Gauge.GetValue()
			case s.Histogram != nil:
				out[f.GetName()] += float64(s.Histogram.GetSampleCount())
			}
		}
	}
	return out
}

// A reload is counted by result, and the routes it names show in
// open_questions from then on.
func TestReloaded(t *testing.T) {
	m := metrics.New("dev", metrics.Source{Routes: []string{"ops"}})
	m.SetOpen(func(context.Context, string, int) ([]*core.Question, string, error) { return nil, "", nil })
	m.Reloaded(false, nil)
	m.Reloaded(true, []string{"ops", "billing"})
	m.Reloaded(false, []string{"ignored"})
	want := `
# HELP askbridge_config_reloads_total Readings of the configuration file after start, by result: ok (applied) or refused (the running configuration stayed).
# TYPE askbridge_config_reloads_total counter
askbridge_config_reloads_total{result="ok"} 1
askbridge_config_reloads_total{result="refused"} 2
# HELP askbridge_open_questions Open questions in the store, by route and reversibility.
# TYPE askbridge_open_questions gauge
askbridge_open_questions{reversibility="hard_to_reverse",route="billing"} 0
askbridge_open_questions{reversibility="hard_to_reverse",route="ops"} 0
askbridge_open_questions{reversibility="reversible",route="billing"} 0
askbridge_open_questions{reversibility="reversible",route="ops"} 0
`
	if err := testutil.GatherAndCompare(m.Gatherer(), strings.NewReader(want), "askbridge_config_reloads_total", "askbridge_open_questions"); err != nil {
		t.Fatal(err)
	}
}

// TestUnrecorded: events the store failed to append are counted by kind,
// each kind at zero from the start so that an alert sees the series.
func TestUnrecorded(t *testing.T) {
	m := metrics.New("dev", metrics.Source{})
	m.Unrecorded(core.EventRefused)
	m.Unrecorded(core.EventRefused)
	m.Unrecorded(core.EventStandingGranted)
	want := `
# HELP askbridge_events_unrecorded_total Events missing from the event log because the store failed to append them, by kind (refused, undelivered, standing_granted, standing_revoked, standing_ended): what they record happened. Anything above zero deserves a look at the store.
# TYPE askbridge_events_unrecorded_total counter
askbridge_events_unrecorded_total{kind="refused"} 2
askbridge_events_unrecorded_total{kind="standing_ended"} 0
askbridge_events_unrecorded_total{kind="standing_granted"} 1
askbridge_events_unrecorded_total{kind="standing_revoked"} 0
askbridge_events_unrecorded_total{kind="undelivered"} 0
`
	if err := testutil.GatherAndCompare(m.Gatherer(), strings.NewReader(want), "askbridge_events_unrecorded_total"); err != nil {
		t.Fatal(err)
	}
}

// TestOpenCountSaysWhenCapped: a backlog larger than one scrape counts
// sets open_questions_capped, so the gauge's flat line at the bound is
// not read as the count; before, nothing said so.
func TestOpenCountSaysWhenCapped(t *testing.T) {
	m := metrics.New("dev", metrics.Source{})
	page := make([]*core.Question, 500)
	for i := range page {
		page[i] = &core.Question{Route: "ops", Reversibility: core.Reversible}
	}
	m.SetOpen(func(context.Context, string, int) ([]*core.Question, string, error) { return page, "more", nil })
	fams := gather(t, m)
	if fams["askbridge_open_questions_capped"] != 1 || fams["askbridge_open_questions"] != 20000 {
		t.Errorf("capped %v, open %v; want 1 and 20000", fams["askbridge_open_questions_capped"], fams["askbridge_open_questions"])
	}
	m.SetOpen(func(context.Context, string, int) ([]*core.Question, string, error) { return page[:3], "", nil })
	if fams = gather(t, m); fams["askbridge_open_questions_capped"] != 0 || fams["askbridge_open_questions"] != 3 {
		t.Errorf("capped %v, open %v; want 0 and 3", fams["askbridge_open_questions_capped"], fams["askbridge_open_questions"])
	}
}

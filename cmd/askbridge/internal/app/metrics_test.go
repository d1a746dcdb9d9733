package app

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads url's /metrics with token ("" for none) and parses it with
// Prometheus's own text parser.
func scrape(t testing.TB, url, token string) map[string]*dto.MetricFamily {
	t.Helper()
	fams, status := tryScrape(t, url, token)
	if status != http.StatusOK {
		t.Fatalf("GET %s/metrics: %d", url, status)
	}
	return fams
}

func tryScrape(t testing.TB, url, token string) (map[string]*dto.MetricFamily, int) {
	t.Helper()
	// Not t.Context(): the scenario checks scrape from a cleanup, after it ended.
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url+"/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams, resp.StatusCode
}

// value sums the series of family name whose labels include want: a
// counter's or gauge's value, a histogram's count.
func value(fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
	f, ok := fams[name]
	if !ok {
		return 0
	}
	var sum float64
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for i := 0; i+1 < len(want); i += 2 {
			if labels[want[i]] != want[i+1] {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum
}

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
	fams, held := scrapeUntil(t, d.prog.URL, d.prog.OperatorToken, ok)
	if !held {
		t.Errorf("%s: never true; /metrics has %v", what, summary(fams))
	}
	return fams
}

// scrapeUntil scrapes url until ok holds or 10 s pass, and returns the
// last scrape and whether ok held.
func scrapeUntil(t *testing.T, url, token string, ok func(map[string]*dto.MetricFamily) bool) (map[string]*dto.MetricFamily, bool) {
	t.Helper()
	var fams map[string]*dto.MetricFamily
	held := scrapesUntil(10*time.Second, func() bool {
		fams = scrape(t, url, token)
		return ok(fams)
	})
	return fams, held
}

// scrapesUntil asks cond every 10 ms until it holds (true) or within passes
// (false). Prometheus metrics are pulled, so a scrape is the only way to
// see a counter or a lease gauge move: there is no event to wait on.
func scrapesUntil(within time.Duration, cond func() bool) bool {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	giveUp := time.After(within)
	for !cond() {
		select {
		case <-tick.C:
		case <-giveUp:
			return cond()
		}
	}
	return true
}

func summary(fams map[string]*dto.MetricFamily) string {
	var b strings.Builder
	for name, f := range fams {
		if !strings.HasPrefix(name, "askbridge_") {
			continue
		}
		for _, m := range f.GetMetric() {
			fmt.Fprintf(&b, "\n  %s%v = %v", name, m.GetLabel(), value(map[string]*dto.MetricFamily{name: {Metric: []*dto.Metric{m}}}, name))
		}
	}
	return b.String()
}

func (d *metricsDriver) check(t *testing.T) {
	s := string(d.Surface())
	people := []string{d.Allowed().ID, d.Allowed2().ID, d.Stranger().ID}
	name := t.Name()[strings.LastIndex(t.Name(), "/")+1:]
	eq := func(fams map[string]*dto.MetricFamily, want float64, metric string, labels ...string) {
		t.Helper()
		if got := value(fams, metric, labels...); got != want {
			t.Errorf("%s: %s%v = %v, want %v", name, metric, labels, got, want)
		}
	}
	var fams map[string]*dto.MetricFamily
	switch name {
	case "1_ClickWakesAgentAndEditsCard":
		// Posted, then edited once it closed.
		fams = d.eventually(t, "post and edit sent", func(f map[string]*dto.MetricFamily) bool {
			return value(f, "askbridge_deliveries_total", "surface", s, "result", core.DeliverySent) >= 2
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
		fams = scrape(t, d.prog.URL, d.prog.OperatorToken)
		eq(fams, 1, "askbridge_refusals_total", "door", "answer", "reason", core.RefusedForbidden)
		eq(fams, 1, "askbridge_resolve_duration_seconds", "result", core.ResolveRefused)
		eq(fams, 0, "askbridge_questions_closed_total")
		eq(fams, 1, "askbridge_open_questions", "route", "ops", "reversibility", "hard_to_reverse")
	case "4_DoubleAndConcurrentClicks":
		fams = scrape(t, d.prog.URL, d.prog.OperatorToken)
		eq(fams, 1, "askbridge_questions_closed_total", "state", "answered", "surface", s)
		eq(fams, 1, "askbridge_resolve_duration_seconds", "result", core.ResolveClosed)
		// The other person's click and the winner's second click lost.
		lost := value(fams, "askbridge_resolve_duration_seconds", "result", core.ResolveLost)
		if lost < 2 {
			t.Errorf("%s: %v lost attempts, want at least 2", name, lost)
		}
		eq(fams, lost, "askbridge_refusals_total", "door", "answer", "reason", core.RefusedClosed)
	case "7_ClickAfterRunEnded":
		fams = scrape(t, d.prog.URL, d.prog.OperatorToken)
		eq(fams, 1, "askbridge_questions_closed_total", "state", "expired", "surface", "system")
		eq(fams, 1, "askbridge_time_to_answer_seconds", "state", "expired")
		eq(fams, 1, "askbridge_refusals_total", "door", "answer", "reason", core.RefusedExpired)
	case "8_AnsweredOnAnotherSurface":
		fams = scrape(t, d.prog.URL, d.prog.OperatorToken)
		eq(fams, 1, "askbridge_questions_closed_total", "state", "answered", "surface", "api")
		eq(fams, 0, "askbridge_questions_closed_total", "surface", s)
	default:
		fams = scrape(t, d.prog.URL, d.prog.OperatorToken)
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
	adaptertest.Run(t, &metricsDriver{Driver: &slackDriver{}})
}

// TestMetricsDoors: who may read /metrics, the separate listener, and the
// gauges of what is open right now (parked waits, event streams, open
// questions) and of refused asks.
func TestMetricsDoors(t *testing.T) {
	m := start(t, Settings{MetricsAddr: "127.0.0.1:0"})
	for token, want := range map[string]int{"": 401, "wrong-token-0123456789": 401, agentA: 403, opTok: 200, obsTok: 200, m.AdminToken: 200} {
		if _, got := tryScrape(t, m.URL, token); got != want {
			t.Errorf("/metrics with token %q: %d, want %d", token, got, want)
		}
	}
	if m.MetricsURL == "" || m.MetricsURL == m.URL {
		t.Fatalf("ASKBRIDGE_METRICS_ADDR gave no listener of its own: %q", m.MetricsURL)
	}
	fams := scrape(t, m.MetricsURL, "") // no token on its own listener
	if value(fams, "askbridge_build_info", "version", versionString()) != 1 {
		t.Errorf("build_info: %v", summary(fams))
	}

	ctx := t.Context()
	agent := client.New(m.URL, agentA)
	q, err := agent.Ask(ctx, client.AskRequest{Kind: core.KindClarification, Question: "Which region?", Reversibility: core.Reversible, RunID: "run-m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Ask(ctx, client.AskRequest{Kind: core.KindClarification, Question: "", Reversibility: core.Reversible, RunID: "run-m"}); err == nil {
		t.Fatal("a blank question was parked")
	}

	// One parked wait and one open event stream.
	waitCtx, stopWait := context.WithCancel(ctx)
	defer stopWait()
	go agent.Wait(waitCtx, q.ID)
	req, _ := http.NewRequestWithContext(waitCtx, http.MethodGet, m.URL+"/v1/events?since=0", nil)
	req.Header.Set("Authorization", "Bearer "+obsTok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	bufio.NewReader(resp.Body).ReadString('\n') // the stream is open

	// And an MCP tool call over HTTP, parked until the question closes.
	cs, err := mcpSession(ctx, m.URL, agentA)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(waitCtx, &mcpsdk.CallToolParams{Name: "request_clarification", Arguments: map[string]any{
			"question": "Which zone?", "reversibility": "reversible", "run_id": "run-m",
		}})
		called <- err
	}()

	open := func(f map[string]*dto.MetricFamily) bool {
		// One scrape reads the series one after another, so wait for a
		// scrape that saw the MCP call's ask and its park alike.
		return value(f, "askbridge_parked_waits") == 2 && value(f, "askbridge_open_streams", "door", "events") == 1 &&
			value(f, "askbridge_open_streams", "door", "mcp") >= 1 && value(f, "askbridge_open_questions") == 2 &&
			value(f, "askbridge_questions_asked_total") == 2
	}
	got, held := scrapeUntil(t, m.MetricsURL, "", open)
	if !held {
		t.Errorf("with a wait parked and a stream open: %s", summary(got))
	}
	for _, c := range []struct {
		want   float64
		metric string
		labels []string
	}{
		{2, "askbridge_questions_asked_total", []string{"kind", "clarification", "route", "default", "reversibility", "reversible"}},
		{1, "askbridge_refusals_total", []string{"door", "ask", "reason", core.RefusedInvalid}},
		{2, "askbridge_open_questions", []string{"route", "default", "reversibility", "reversible"}},
		{0, "askbridge_store_scrape_errors", nil},
	} {
		if v := value(got, c.metric, c.labels...); v != c.want {
			t.Errorf("%s%v = %v, want %v", c.metric, c.labels, v, c.want)
		}
	}
	for _, s := range core.ChatSurfaces {
		if _, ok := got["askbridge_outbox_depth"]; !ok || value(got, "askbridge_outbox_depth", "surface", string(s)) != 0 {
			t.Errorf("outbox depth for %s: %s", s, summary(got))
		}
	}

	ops := client.New(m.URL, opTok)
	if _, err := ops.Answer(ctx, q.ID, client.AnswerRequest{Answer: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	closed := func(f map[string]*dto.MetricFamily) bool {
		return value(f, "askbridge_answer_to_wake_seconds") == 1 && value(f, "askbridge_parked_waits") == 1
	}
	if got, held = scrapeUntil(t, m.MetricsURL, "", closed); !held {
		t.Errorf("after the answer woke the wait: %s", summary(got))
	}
	if v := value(got, "askbridge_time_to_answer_seconds", "kind", "clarification", "route", "default", "state", "answered"); v != 1 {
		t.Errorf("time to answer count %v", v)
	}
	if v := value(got, "askbridge_open_questions"); v != 1 {
		t.Errorf("open questions after the answer, the MCP one still open: %v", v)
	}
	// Answer the MCP call's question too: the call returns, and then the
	// session closes, with the stream it held open.
	page, err := ops.List(ctx, "", 10)
	if err != nil || len(page.Questions) != 1 {
		t.Fatalf("open questions: %v %v", page, err)
	}
	if _, err := ops.Answer(ctx, page.Questions[0].ID, client.AnswerRequest{Answer: "b"}); err != nil {
		t.Fatal(err)
	}
	if err := <-called; err != nil {
		t.Fatalf("the MCP call: %v", err)
	}
	cs.Close()
	if got, held = scrapeUntil(t, m.MetricsURL, "", func(f map[string]*dto.MetricFamily) bool {
		return value(f, "askbridge_parked_waits") == 0 && value(f, "askbridge_open_streams", "door", "mcp") == 0
	}); !held {
		t.Errorf("after the MCP call returned and its session closed: %s", summary(got))
	}
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/rs/zerolog"
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
				bad := core.ValidID(v)
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

// TestGrafanaDashboard loads deploy/grafana/askbridge.json and checks that
// every metric its queries name is one the program exports (scraped after
// an ask and an answer), and that every metric the program exports has a
// panel.
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/grafana/askbridge.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title      string
		UID        string
		Templating struct {
			List []struct{ Name, Type, Query string }
		}
		Panels []struct {
			Type, Title string
			Datasource  *struct{ Type, UID string }
			Targets     []struct{ Expr, RefID string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("the dashboard is not valid JSON: %v", err)
	}
	if dash.Title == "" || dash.UID == "" || len(dash.Templating.List) == 0 || dash.Templating.List[0].Query != "prometheus" {
		t.Errorf("title %q, uid %q, templating %+v", dash.Title, dash.UID, dash.Templating)
	}

	m := start(t, Settings{})
	ctx := t.Context()
	q, err := client.New(m.URL, agentA).Ask(ctx, client.AskRequest{Kind: core.KindClarification, Question: "Which region?", Reversibility: core.Reversible, RunID: "run-g"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.New(m.URL, opTok).Answer(ctx, q.ID, client.AnswerRequest{Answer: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	exported := map[string]*dto.MetricFamily{}
	for name, f := range scrape(t, m.URL, obsTok) {
		if strings.HasPrefix(name, "askbridge_") {
			exported[name] = f
		}
	}

	name := regexp.MustCompile(`askbridge_[a-z_]+`)
	used := map[string]bool{}
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 || p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: %d queries, datasource %+v", p.Title, len(p.Targets), p.Datasource)
		}
		for _, tg := range p.Targets {
			for _, n := range name.FindAllString(tg.Expr, -1) {
				base := n
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					if b, ok := strings.CutSuffix(n, suffix); ok && exported[b] != nil && exported[b].GetType() == dto.MetricType_HISTOGRAM {
						base = b
					}
				}
				if exported[base] == nil {
					t.Errorf("panel %q queries %s, which the program does not export", p.Title, n)
				}
				used[base] = true
			}
		}
	}
	for n := range exported {
		if !used[n] {
			t.Errorf("%s is exported but no panel shows it", n)
		}
	}
}

// pollingSettings are two replicas' settings: Telegram in polling mode
// against one fake, on one Redis, with one actor key.
func pollingSettings(tb testing.TB) Settings {
	fake := telegramfake.Start(tb, tgToken)
	return Settings{RedisURL: Secret(redistest.Start(tb).URL()), ActorKey: "shared-actor-key-0123456789",
		Telegram: TelegramSettings{BotToken: Secret(tgToken), APIURL: fake.Endpoint()}}
}

// leaseHolders is how many of the running programs say they hold the
// Telegram polling lease.
func leaseHolders(t testing.TB, ms ...*Main) (n float64) {
	for _, m := range ms {
		if m == nil {
			continue
		}
		n += value(scrape(t, m.URL, obsTok), "askbridge_leases_held", "lease", "telegram")
	}
	return n
}

// holds waits until m reports the Telegram polling lease; a benchmark
// times the wait, so it checks as often as scrapesUntil does.
func holds(b *testing.B, m *Main) {
	b.Helper()
	if !scrapesUntil(30*time.Second, func() bool { return leaseHolders(b, m) == 1 }) {
		b.Fatal("the replica never took the polling lease")
	}
}

// TestTelegramLeaseMetric: of two replicas polling one bot, exactly one
// reports the lease.
func TestTelegramLeaseMetric(t *testing.T) {
	s := pollingSettings(t)
	a, b := start(t, s), start(t, s)
	if !scrapesUntil(10*time.Second, func() bool { return leaseHolders(t, a, b) == 1 }) {
		t.Fatalf("%v replicas report the polling lease, want 1", leaseHolders(t, a, b))
	}
	for _, m := range []*Main{a, b} {
		if v := value(scrape(t, m.URL, obsTok), "askbridge_leases_held", "lease", "telegram"); v != 0 && v != 1 {
			t.Errorf("leases_held = %v", v)
		}
	}
}

// BenchmarkTelegramFailover measures how long Telegram polling is without
// a poller when the replica holding the lease stops gracefully (it
// releases the lease; the other replica takes it at its next try): from
// the holder's Close returning to the other reporting the lease.
//
//	go test -run '^$' -bench TelegramFailover -benchtime 3x ./cmd/askbridge/
func BenchmarkTelegramFailover(b *testing.B) {
	s := pollingSettings(b)
	run := func() *Main {
		s := s
		s.DataDir, s.Addr = b.TempDir(), "127.0.0.1:0"
		s.File.Tokens = []TokenFile{{Name: "dash", Role: "observer", Token: obsTok}}
		m := &Main{Settings: s, Log: zerolog.Nop()}
		if err := m.Run(b.Context()); err != nil {
			b.Fatal(err)
		}
		return m
	}
	holder := run()
	for b.Loop() {
		b.StopTimer()
		standby := run()
		holds(b, holder)
		b.StartTimer()
		holder.Close()
		holds(b, standby)
		holder = standby
	}
	b.StopTimer()
	holder.Close()
}

// BenchmarkOutboxTakeover measures how long a card waits when the replica
// that claimed it dies before sending it: a consumer claims the post and
// never sends, acks or hands it back (as a crashed replica would), and a
// live program on the same Redis posts it once the claim has gone without
// a heartbeat for policies.outbox_idle (10 s by default). The figure is
// from that claim to the card on the Slack fake.
//
//	go test -run '^$' -bench OutboxTakeover -benchtime 3x ./cmd/askbridge/
func BenchmarkOutboxTakeover(b *testing.B) {
	redis := redistest.Start(b).URL()
	fake := slackfake.New()
	b.Cleanup(fake.Close)
	s, err := LoadSettings(func(k string) string {
		return map[string]string{"SLACK_BOT_TOKEN": "xoxb-test-bot-token", "SLACK_SIGNING_SECRET": slackSecret,
			"SLACK_API_URL": fake.APIURL(), "REDIS_URL": redis, "ASKBRIDGE_ACTOR_KEY": "shared-actor-key-0123456789"}[k]
	})
	if err != nil {
		b.Fatal(err)
	}
	s.Addr = "127.0.0.1:0"
	s.File.Routes = map[string]RouteFile{"ops": {Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: slackRoom}}}}
	ctx := b.Context()
	st, err := redisstore.Open(ctx, redis, redisstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc, err := core.New(st, s.coreConfig([]byte(s.ActorKey.Reveal())), nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Route: "ops",
			Text: "Which region?", Reversibility: core.Reversible})
		if err != nil {
			b.Fatal(err)
		}
		if got, err := st.Claim(ctx, core.SurfaceSlack, "crashed-replica", 10, core.DefaultMinIdle, 0); err != nil || len(got) != 1 {
			b.Fatalf("the dead replica's claim: %d, %v", len(got), err)
		}
		s.DataDir = b.TempDir()
		live := &Main{Settings: s, Log: zerolog.Nop()}
		if err := live.Run(ctx); err != nil {
			b.Fatal(err)
		}
		posted := fake.WaitFor(time.Minute, func() bool {
			for _, m := range fake.Messages() {
				if id, ok := slackCardOf(m); ok && id == q.ID {
					return true
				}
			}
			return false
		})
		b.StopTimer()
		live.Close()
		if !posted {
			b.Fatal("the live replica never posted the dead one's card")
		}
		b.StartTimer()
	}
}

// cutter is a TCP relay to Redis that can cut every connection at once and
// refuse new ones: to a program behind it, Redis has vanished, so it can
// neither renew nor release its leases, which is what a crashed replica
// leaves behind.
type cutter struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newCutter(tb testing.TB, target string) *cutter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	c := &cutter{ln: ln}
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, in, out)
			c.mu.Unlock()
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	tb.Cleanup(c.cut)
	return c
}

func (c *cutter) addr() string { return c.ln.Addr().String() }

func (c *cutter) cut() {
	c.ln.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}

// BenchmarkTelegramFailoverCrash is BenchmarkTelegramFailover with the
// holder dying instead of stopping: its connection to Redis is cut, so its
// lease is neither renewed nor released and has to lapse (core's
// DefaultLeaseTTL) before the other replica can take it.
//
//	go test -run '^$' -bench TelegramFailoverCrash -benchtime 3x ./cmd/askbridge/
func BenchmarkTelegramFailoverCrash(b *testing.B) {
	s := pollingSettings(b)
	redisAddr := strings.TrimPrefix(s.RedisURL.Reveal(), "redis://")
	redisAddr, _, _ = strings.Cut(redisAddr, "/")
	run := func(redisURL string) *Main {
		s := s
		s.RedisURL = Secret(redisURL)
		s.DataDir, s.Addr = b.TempDir(), "127.0.0.1:0"
		s.File.Tokens = []TokenFile{{Name: "dash", Role: "observer", Token: obsTok}}
		m := &Main{Settings: s, Log: zerolog.Nop()}
		if err := m.Run(b.Context()); err != nil {
			b.Fatal(err)
		}
		return m
	}
	for b.Loop() {
		b.StopTimer()
		relay := newCutter(b, redisAddr)
		holder := run("redis://" + relay.addr() + "/0")
		holds(b, holder)
		standby := run(s.RedisURL.Reveal())
		b.StartTimer()
		relay.cut()
		holds(b, standby)
		b.StopTimer()
		standby.Close()
		go holder.Close() // its store is gone: it stops in its own time
		b.StartTimer()
	}
}

// TestMetricsOneLateAttemptCountsOnce: one late attempt through the API,
// on each kind of question, is one 409, one refused event and one
// refusal and one lost pass on /metrics, however often the chokepoint
// may try the store for some answers.
func TestMetricsOneLateAttemptCountsOnce(t *testing.T) {
	s := Settings{}
	anyone := map[string][]string{"api": {"*"}}
	s.File.Routes = map[string]RouteFile{core.DefaultRoute: {Deciders: anyone}, "two": {Deciders: anyone, Quorum: 2}}
	m := start(t, s)
	ctx := t.Context()
	agent, ops, admin := client.New(m.URL, agentA), client.New(m.URL, opTok), client.New(m.URL, m.AdminToken)
	approval := client.AskRequest{Kind: core.KindApproval, Question: "Deploy?", Reversibility: core.HardToReverse,
		RunID: "run-late", Tool: "deploy", Arguments: json.RawMessage(`{"cmd":"make test && ./deploy.sh > deploy.log"}`)}
	form := client.AskRequest{Kind: core.KindForm, Question: "Plan?", Reversibility: core.Reversible, RunID: "run-late",
		Items: []core.FormItem{{ID: "day", Question: "Which day?", Options: []core.FormOption{{ID: "mon", Label: "Monday"}, {ID: "fri", Label: "Friday"}}}}}
	batch := client.AskRequest{Kind: core.KindApproval, Question: "Write these?", Reversibility: core.Reversible, RunID: "run-late",
		Calls: []core.CallInput{
			{ToolCallID: "w1", Tool: "write_file", Arguments: json.RawMessage(`{"path":"/a"}`)},
			{ToolCallID: "w2", Tool: "write_file", Arguments: json.RawMessage(`{"path":"/b"}`)},
		}}
	quorum := approval
	quorum.Route, quorum.ToolCallID = "two", "vote"
	approve := client.AnswerRequest{ChosenOptionID: core.ApproveOption}
	deny := client.AnswerRequest{ChosenOptionID: core.DenyOption}
	tests := []struct {
		name  string
		ask   client.AskRequest
		close []client.AnswerRequest // by ops, then by admin
		late  client.AnswerRequest   // by admin, or by ops once both voted
	}{
		{"approve", withCall(approval, "a1"), []client.AnswerRequest{deny}, approve},
		{"deny", withCall(approval, "a2"), []client.AnswerRequest{approve}, deny},
		{"clarification", clarify("Which region?"), []client.AnswerRequest{{Answer: "eu-west-1"}}, client.AnswerRequest{Answer: "us-east-1"}},
		{"form", form, []client.AnswerRequest{{Items: []client.ItemAnswer{{ItemID: "day", OptionID: "mon"}}}},
			client.AnswerRequest{Items: []client.ItemAnswer{{ItemID: "day", OptionID: "fri"}}}},
		{"batch approve all", batch, []client.AnswerRequest{deny}, approve},
		{"quorum vote", quorum, []client.AnswerRequest{approve, approve}, approve},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := agent.Ask(ctx, tt.ask)
			if err != nil {
				t.Fatal(err)
			}
			voters := []*client.Client{ops, admin}
			for i, a := range tt.close {
				if _, err := voters[i].Answer(ctx, q.ID, a); err != nil {
					t.Fatalf("closing: %v", err)
				}
			}
			if got, err := ops.Get(ctx, q.ID); err != nil || got.State == core.StateOpen {
				t.Fatalf("after closing: %+v, %v", got, err)
			}
			before := scrape(t, m.URL, opTok)
			late := admin
			if len(tt.close) > 1 {
				late = ops // both voted: one of them comes back, as anyone late would
			}
			_, err = late.Answer(ctx, q.ID, tt.late)
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Status != http.StatusConflict {
				t.Fatalf("the late answer: %v, want 409", err)
			}
			after := scrape(t, m.URL, opTok)
			for _, c := range []struct {
				metric string
				labels []string
			}{
				{"askbridge_refusals_total", []string{"door", "answer", "reason", core.RefusedClosed}},
				{"askbridge_refusals_total", nil},
				{"askbridge_resolve_duration_seconds", []string{"result", core.ResolveLost}},
				{"askbridge_resolve_duration_seconds", nil},
			} {
				if d := value(after, c.metric, c.labels...) - value(before, c.metric, c.labels...); d != 1 {
					t.Errorf("%s%v rose by %v, want 1", c.metric, c.labels, d)
				}
			}
			evs, err := ops.Events(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			refused := 0
			for _, e := range evs {
				if e.QuestionID == q.ID && e.Kind == core.EventRefused {
					refused++
				}
			}
			if refused != 1 {
				t.Errorf("%d refused events, want 1", refused)
			}
		})
	}
}

func withCall(in client.AskRequest, call string) client.AskRequest {
	in.ToolCallID = call
	return in
}

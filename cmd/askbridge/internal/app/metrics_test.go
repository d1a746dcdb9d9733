package app_test

import (
	"bufio"
	"context"
	"net/http"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
)

// TestMetricsDoors: who may read /metrics, the separate listener, and the
// gauges of what is open right now (parked waits, event streams, open
// questions) and of refused asks.
func TestMetricsDoors(t *testing.T) {
	m := apptest.Start(t, app.Settings{MetricsAddr: "127.0.0.1:0"})
	for token, want := range map[string]int{"": 401, "wrong-token-0123456789": 401, apptest.AgentA: 403, apptest.OpTok: 200, apptest.ObsTok: 200, m.AdminToken: 200} {
		if _, got := apptest.TryScrape(t, m.URL, token); got != want {
			t.Errorf("/metrics with token %q: %d, want %d", token, got, want)
		}
	}
	if m.MetricsURL == "" || m.MetricsURL == m.URL {
		t.Fatalf("ASKBRIDGE_METRICS_ADDR gave no listener of its own: %q", m.MetricsURL)
	}
	fams := apptest.Scrape(t, m.MetricsURL, "") // no token on its own listener
	if apptest.Value(fams, "askbridge_build_info", "version", app.VersionString()) != 1 {
		t.Errorf("build_info: %v", apptest.Summary(fams))
	}

	ctx := t.Context()
	agent := client.New(m.URL, apptest.AgentA)
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
	req.Header.Set("Authorization", "Bearer "+apptest.ObsTok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	bufio.NewReader(resp.Body).ReadString('\n') // the stream is open

	// And an MCP tool call over HTTP, parked until the question closes.
	cs, err := mcpSession(ctx, m.URL, apptest.AgentA)
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
		// Scrape that saw the MCP call's ask and its park alike.
		return apptest.Value(f, "askbridge_parked_waits") == 2 && apptest.Value(f, "askbridge_open_streams", "door", "events") == 1 &&
			apptest.Value(f, "askbridge_open_streams", "door", "mcp") >= 1 && apptest.Value(f, "askbridge_open_questions") == 2 &&
			apptest.Value(f, "askbridge_questions_asked_total") == 2
	}
	got, held := apptest.ScrapeUntil(t, m.MetricsURL, "", open)
	if !held {
		t.Errorf("with a wait parked and a stream open: %s", apptest.Summary(got))
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
		if v := apptest.Value(got, c.metric, c.labels...); v != c.want {
			t.Errorf("%s%v = %v, want %v", c.metric, c.labels, v, c.want)
		}
	}
	for _, s := range core.ChatSurfaces {
		if _, ok := got["askbridge_outbox_depth"]; !ok || apptest.Value(got, "askbridge_outbox_depth", "surface", string(s)) != 0 {
			t.Errorf("outbox depth for %s: %s", s, apptest.Summary(got))
		}
	}

	ops := client.New(m.URL, apptest.OpTok)
	if _, err := ops.Answer(ctx, q.ID, client.AnswerRequest{Answer: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	closed := func(f map[string]*dto.MetricFamily) bool {
		return apptest.Value(f, "askbridge_answer_to_wake_seconds") == 1 && apptest.Value(f, "askbridge_parked_waits") == 1
	}
	if got, held = apptest.ScrapeUntil(t, m.MetricsURL, "", closed); !held {
		t.Errorf("after the answer woke the wait: %s", apptest.Summary(got))
	}
	if v := apptest.Value(got, "askbridge_time_to_answer_seconds", "kind", "clarification", "route", "default", "state", "answered"); v != 1 {
		t.Errorf("time to answer count %v", v)
	}
	if v := apptest.Value(got, "askbridge_open_questions"); v != 1 {
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
	if got, held = apptest.ScrapeUntil(t, m.MetricsURL, "", func(f map[string]*dto.MetricFamily) bool {
		return apptest.Value(f, "askbridge_parked_waits") == 0 && apptest.Value(f, "askbridge_open_streams", "door", "mcp") == 0
	}); !held {
		t.Errorf("after the MCP call returned and its session closed: %s", apptest.Summary(got))
	}
}

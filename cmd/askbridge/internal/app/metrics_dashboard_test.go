package app_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	dto "github.com/prometheus/client_model/go"
)

// TestGrafanaDashboard loads deploy/grafana/askbridge.json and checks that
// every metric its queries name is one the program exports (scraped after
// an ask and an answer), and that every metric the program exports has a
// panel.
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile("../../../../deploy/grafana/askbridge.json")
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

	m := apptest.Start(t, app.Settings{})
	ctx := t.Context()
	q, err := client.New(m.URL, apptest.AgentA).Ask(ctx, client.AskRequest{Kind: core.KindClarification, Question: "Which region?", Reversibility: core.Reversible, RunID: "run-g"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.New(m.URL, apptest.OpTok).Answer(ctx, q.ID, client.AnswerRequest{Answer: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	exported := map[string]*dto.MetricFamily{}
	for name, f := range apptest.Scrape(t, m.URL, apptest.ObsTok) {
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

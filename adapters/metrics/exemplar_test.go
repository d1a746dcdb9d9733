package metrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/metrics"
	"github.com/askbridge/askbridge/core"
)

// TestTimeToAnswerLinksItsTrace: a question asked under a sampled trace
// puts an exemplar naming that trace on its time-to-answer bucket, which
// an OpenMetrics scrape shows; an unsampled or untraced question puts
// none.
func TestTimeToAnswerLinksItsTrace(t *testing.T) {
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	closed := func(route, traceparent string, took time.Duration) *core.Question {
		return &core.Question{Kind: core.KindClarification, Route: route, CreatedAt: t0, State: core.StateAnswered,
			TraceParent: traceparent, Resolution: &core.Resolution{State: core.StateAnswered, At: t0.Add(took),
				ClosedBy: core.CloserPerson, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"}}}
	}
	m := metrics.New("v1", metrics.Source{})
	m.Closed(closed("sampled", "00-"+traceID+"-00f067aa0ba902b7-01", 40*time.Second))
	m.Closed(closed("unsampled", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00", 40*time.Second))
	m.Closed(closed("untraced", "", 40*time.Second))

	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	exemplars := map[string][]string{}
	for _, f := range fams {
		if f.GetName() != "askbridge_time_to_answer_seconds" {
			continue
		}
		for _, mt := range f.GetMetric() {
			var route string
			for _, l := range mt.GetLabel() {
				if l.GetName() == "route" {
					route = l.GetValue()
				}
			}
			exemplars[route] = nil
			for _, b := range mt.GetHistogram().GetBucket() {
				if ex := b.GetExemplar(); ex != nil {
					for _, l := range ex.GetLabel() {
						exemplars[route] = append(exemplars[route], l.GetName()+"="+l.GetValue())
					}
					if b.GetUpperBound() != 60 || ex.GetValue() != 40 {
						t.Errorf("exemplar %v on the bucket up to %v, want 40 on the bucket up to 60", ex.GetValue(), b.GetUpperBound())
					}
				}
			}
		}
	}
	if got := exemplars["sampled"]; len(got) != 1 || got[0] != "trace_id="+traceID {
		t.Errorf("sampled question's exemplars %v, want trace_id=%s", got, traceID)
	}
	for _, r := range []string{"unsampled", "untraced"} {
		if got, ok := exemplars[r]; !ok || len(got) != 0 {
			t.Errorf("%s question: series %v, exemplars %v; want the series and no exemplar", r, ok, got)
		}
	}

	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `# {trace_id="` + traceID + `"} 40`; !strings.Contains(string(body), want) {
		t.Errorf("the OpenMetrics scrape has no %s", want)
	}
}

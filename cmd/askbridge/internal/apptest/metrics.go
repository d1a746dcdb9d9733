package apptest

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape reads url's /metrics with token ("" for none) and parses it with
// Prometheus's own text parser.
func Scrape(t testing.TB, url, token string) map[string]*dto.MetricFamily {
	t.Helper()
	fams, status := TryScrape(t, url, token)
	if status != http.StatusOK {
		t.Fatalf("GET %s/metrics: %d", url, status)
	}
	return fams
}

func TryScrape(t testing.TB, url, token string) (map[string]*dto.MetricFamily, int) {
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

// Value sums the series of family name whose labels include want: a
// counter's or gauge's value, a histogram's count.
func Value(fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
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

// ScrapeUntil scrapes url until ok holds or 10 s pass, and returns the
// last scrape and whether ok held.
func ScrapeUntil(t *testing.T, url, token string, ok func(map[string]*dto.MetricFamily) bool) (map[string]*dto.MetricFamily, bool) {
	t.Helper()
	var fams map[string]*dto.MetricFamily
	held := ScrapesUntil(10*time.Second, func() bool {
		fams = Scrape(t, url, token)
		return ok(fams)
	})
	return fams, held
}

// ScrapesUntil asks cond every 10 ms until it holds (true) or within passes
// (false). Prometheus metrics are pulled, so a scrape is the only way to
// see a counter or a lease gauge move: there is no event to wait on.
func ScrapesUntil(within time.Duration, cond func() bool) bool {
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

func Summary(fams map[string]*dto.MetricFamily) string {
	var b strings.Builder
	for name, f := range fams {
		if !strings.HasPrefix(name, "askbridge_") {
			continue
		}
		for _, m := range f.GetMetric() {
			fmt.Fprintf(&b, "\n  %s%v = %v", name, m.GetLabel(), Value(map[string]*dto.MetricFamily{name: {Metric: []*dto.Metric{m}}}, name))
		}
	}
	return b.String()
}

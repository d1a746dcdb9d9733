package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/askbridge/askbridge/adapters/metrics"
)

// TestStreamsCountEveryDoor: while a request to each long-lived door is
// in its handler, open_streams counts it under its door, the console's
// event stream (GET /stream) included, and a request to anything else
// is not counted; each is let go when its handler returns. Before, the
// console's streams were not counted at all, so a replica holding many
// signed-in pages showed no open streams.
func TestStreamsCountEveryDoor(t *testing.T) {
	m := metrics.New("v1", metrics.Source{})
	inside := make(chan struct{})
	release := make(chan struct{})
	h := m.Streams(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		inside <- struct{}{}
		<-release
	}))
	for _, c := range []struct{ method, path, door string }{
		{http.MethodGet, "/v1/events", "events"},
		{http.MethodPost, "/mcp", "mcp"},
		{http.MethodGet, "/stream", "console"},
		{http.MethodGet, "/questions", ""},
	} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(c.method, c.path, nil))
		}()
		<-inside
		for _, door := range []string{"events", "mcp", "console"} {
			want := 0.0
			if door == c.door {
				want = 1
			}
			if got := openStreams(t, m, door); got != want {
				t.Errorf("%s %s in its handler: open_streams{door=%q} = %v, want %v", c.method, c.path, door, got, want)
			}
		}
		release <- struct{}{}
		<-done
		if c.door != "" {
			if got := openStreams(t, m, c.door); got != 0 {
				t.Errorf("%s %s returned: open_streams{door=%q} = %v, want 0", c.method, c.path, c.door, got)
			}
		}
	}
}

// openStreams is open_streams' value for door as a scrape reads it (0
// when the series is not there).
func openStreams(t *testing.T, m *metrics.Metrics, door string) float64 {
	t.Helper()
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "askbridge_open_streams" {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "door" && l.GetValue() == door {
					return s.GetGauge().GetValue()
				}
			}
		}
	}
	return 0
}

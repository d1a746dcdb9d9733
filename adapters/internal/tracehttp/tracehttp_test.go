package tracehttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/askbridge/askbridge/adapters/internal/tracehttp"
)

// TestTransportCarriesTheSpan: a request made under a span reaches the
// receiver with that span as its traceparent (the W3C format: version,
// trace id, parent id, flags), and the caller's request is left as it
// was; a request under no span carries no header.
func TestTransportCarriesTheSpan(t *testing.T) {
	got := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("traceparent") + "|" + r.Header.Get("tracestate")
	}))
	defer srv.Close()
	hc := &http.Client{Transport: tracehttp.Transport(srv.Client().Transport)}

	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ts, _ := trace.ParseTraceState("rojo=00f067aa0ba902b7")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, TraceState: ts})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)

	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01|rojo=00f067aa0ba902b7"; <-got != want {
		t.Errorf("receiver got another trace context, want %s", want)
	}
	if req.Header.Get("traceparent") != "" {
		t.Error("the caller's request was changed")
	}

	req, _ = http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL, nil)
	if resp, err = hc.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if h := <-got; h != "|" {
		t.Errorf("a request under no span carried %q", h)
	}
}

package app_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/redistest"
)

// TestTracingIsOffWithoutOTELVariables: with no OTEL_* variable set, or
// tracing switched off by one, there is no provider (so no exporter and
// no goroutine) and the process's global provider is left alone.
func TestTracingIsOffWithoutOTELVariables(t *testing.T) {
	global := otel.GetTracerProvider()
	for _, env := range []map[string]string{
		{},
		{"ASKBRIDGE_ADDR": "127.0.0.1:0", "OTEL": "x", "OTELX_SERVICE_NAME": "y"},
		{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
		{"OTEL_TRACES_EXPORTER": "none", "OTEL_SERVICE_NAME": "askbridge-eu"},
	} {
		tr, err := app.OpenTracing(t.Context(), func(k string) string { return env[k] }, io.Discard, zerolog.Nop())
		if err != nil || tr != nil || tr.Provider() != nil {
			t.Errorf("%v: tracing %+v, %v; want off", env, tr, err)
		}
		tr.Close(zerolog.Nop()) // off closes as a no-op
	}
	if otel.GetTracerProvider() != global {
		t.Error("the global tracer provider was replaced")
	}
}

// TestTracingRefusesWhatItCannotHonour: a value askbridge cannot act on
// is refused with the variable's name, not replaced by a default.
func TestTracingRefusesWhatItCannotHonour(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OTEL_SDK_DISABLED": "maybe"}, "OTEL_SDK_DISABLED: "},
		{map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, "OTEL_TRACES_EXPORTER: \"zipkin\""},
		{map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "OTEL_EXPORTER_OTLP_PROTOCOL: \"grpc\""},
		{map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"},
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: \"http/json\""},
		{map[string]string{"OTEL_TRACES_SAMPLER": "sometimes"}, "OTEL_TRACES_SAMPLER: \"sometimes\""},
		{map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, "OTEL_TRACES_SAMPLER_ARG: \"2\""},
	} {
		tr, err := app.OpenTracing(t.Context(), func(k string) string { return tt.env[k] }, io.Discard, zerolog.Nop())
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || tr != nil {
			t.Errorf("%v: %v, %v; want an error starting %q", tt.env, tr, err, tt.want)
		}
	}
}

// otlpReceiver is a collector's OTLP/HTTP trace endpoint: it decodes
// every export the way a collector does and keeps the spans.
type otlpReceiver struct {
	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || err != nil || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "not an OTLP/HTTP protobuf trace export", http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				o.services = append(o.services, kv.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			o.spans = append(o.spans, ss.GetSpans()...)
		}
	}
	o.mu.Unlock()
	resp, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

func (o *otlpReceiver) named(t *testing.T, name string) *tracepb.Span {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.spans {
		if s.GetName() == name {
			return s
		}
	}
	t.Fatalf("no %s span among the %d received", name, len(o.spans))
	return nil
}

// agentSpan is an agent's own turn: its context, to call askbridge with,
// and its span context.
func agentSpan(t *testing.T) (context.Context, trace.SpanContext) {
	t.Helper()
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx, span := tp.Tracer("agent").Start(t.Context(), "agent turn")
	t.Cleanup(func() { span.End() })
	return ctx, span.SpanContext()
}

// TestServeExportsTracesOverOTLP runs the program with the OTEL_*
// variables pointing at a local OTLP/HTTP receiver: an agent's ask and an
// operator's answer reach it as spans of the agent's trace, under the
// configured service name, once the program stops.
func TestServeExportsTracesOverOTLP(t *testing.T) {
	rx := &otlpReceiver{}
	collector := httptest.NewServer(rx)
	defer collector.Close()
	// The exporter reads its own variables from the process environment.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_SERVICE_NAME", "askbridge-test")
	tr, err := app.OpenTracing(t.Context(), os.Getenv, io.Discard, zerolog.Nop())
	if err != nil || tr == nil {
		t.Fatalf("tracing: %v, %v", tr, err)
	}
	m := apptest.StartMain(t, &app.Main{Tracing: tr.Provider()})
	ctx, agent := agentSpan(t)
	q, err := client.New(m.URL, apptest.AgentA).Ask(ctx, client.AskRequest{Kind: core.KindClarification, Question: "Which region?",
		Reversibility: core.Reversible, RunID: "run-otlp"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.New(m.URL, apptest.OpTok).Answer(t.Context(), q.ID, client.AnswerRequest{Answer: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	tr.Close(zerolog.Nop()) // sends what is batched, as serve does at its stop

	ask := rx.named(t, "askbridge.ask")
	if hex.EncodeToString(ask.GetTraceId()) != agent.TraceID().String() || hex.EncodeToString(ask.GetParentSpanId()) != agent.SpanID().String() {
		t.Fatalf("ask span in trace %x under %x, want the agent's span %v", ask.GetTraceId(), ask.GetParentSpanId(), agent)
	}
	for _, name := range []string{"askbridge.resolve", "askbridge.wait"} {
		if s := rx.named(t, name); string(s.GetParentSpanId()) != string(ask.GetSpanId()) || string(s.GetTraceId()) != string(ask.GetTraceId()) {
			t.Errorf("%s under %x, want the ask's span %x", name, s.GetParentSpanId(), ask.GetSpanId())
		}
	}
	rx.mu.Lock()
	defer rx.mu.Unlock()
	for _, s := range rx.services {
		if s != "askbridge-test" {
			t.Errorf("service.name %q, want OTEL_SERVICE_NAME's", s)
		}
	}
}

// TestOneTraceAcrossRedisReplicas: two replicas of the real program on
// one Redis, each with its own tracer provider, as two processes would
// have. An ask on A and its answer on B end up in one trace: B's spans
// are children of the span A stored with the question.
func TestOneTraceAcrossRedisReplicas(t *testing.T) {
	srv := redistest.Start(t)
	replica := func() (*app.Main, *tracetest.InMemoryExporter) {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		return apptest.StartMain(t, &app.Main{Settings: app.Settings{RedisURL: app.Secret("redis://" + srv.Addr())}, Tracing: tp}), exp
	}
	a, expA := replica()
	b, expB := replica()

	ctx, agent := agentSpan(t)
	q, err := client.New(a.URL, apptest.AgentA).Ask(ctx, client.AskRequest{Kind: core.KindClarification, Question: "Which region?",
		Reversibility: core.Reversible, RunID: "run-replicas"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.New(b.URL, apptest.OpTok).Answer(t.Context(), q.ID, client.AnswerRequest{Answer: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	if res, err := client.New(a.URL, apptest.AgentA).WaitOnce(ctx, q.ID, 0); err != nil || res.State != core.StateAnswered {
		t.Fatalf("wait on A: %+v %v", res, err)
	}

	named := func(exp *tracetest.InMemoryExporter, name string) []tracetest.SpanStub {
		var out []tracetest.SpanStub
		for _, s := range exp.GetSpans() {
			if s.Name == name {
				out = append(out, s)
			}
		}
		return out
	}
	asks := named(expA, "askbridge.ask")
	if len(asks) != 1 || asks[0].Parent.SpanID() != agent.SpanID() || asks[0].SpanContext.TraceID() != agent.TraceID() {
		t.Fatalf("A's ask spans %+v, want one under the agent's span %v", asks, agent)
	}
	ask := asks[0].SpanContext
	for _, name := range []string{"askbridge.resolve", "askbridge.wait"} {
		if got := named(expA, name); len(got) != 0 {
			t.Errorf("A made %d %s spans; the answer was B's", len(got), name)
		}
		got := named(expB, name)
		if len(got) != 1 || got[0].Parent.SpanID() != ask.SpanID() || got[0].SpanContext.TraceID() != agent.TraceID() || !got[0].Parent.IsRemote() {
			t.Fatalf("B's %s spans %+v, want one under A's ask span %v", name, got, ask)
		}
	}
}

// TestMCPToolCallsContinueTheHostsTrace: over stdio (`askbridge mcp`,
// which calls the API) and over /mcp, a tool call whose _meta carries a
// traceparent parks its question under that parent.
func TestMCPToolCallsContinueTheHostsTrace(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	b := &apptest.Bridge{Main: apptest.StartMain(t, &app.Main{Tracing: tp})}
	ops := client.New(b.Main.URL, apptest.OpTok)
	for i, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			cs := tr.connect(t, ctx, b, nil)
			traceID, parent := fmt.Sprintf("4bf92f3577b34da6a3ce929d0e0e473%d", i), "00f067aa0ba902b7"
			text := "Which region, over " + tr.name + "?"
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: mcp.ToolClarification,
					Meta:      mcpsdk.Meta{"traceparent": "00-" + traceID + "-" + parent + "-01"},
					Arguments: map[string]any{"question": text, "reversibility": "reversible"}})
				done <- err
			}()
			q := parkedAs(t, ctx, ops, text)
			if _, err := ops.Answer(ctx, q.ID, client.AnswerRequest{Answer: "eu-west-1"}); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			for _, s := range exp.GetSpans() {
				if s.Name == "askbridge.ask" && s.SpanContext.TraceID().String() == traceID {
					if s.Parent.SpanID().String() != parent {
						t.Fatalf("ask span under %s, want %s", s.Parent.SpanID(), parent)
					}
					return
				}
			}
			t.Fatalf("no ask span in trace %s", traceID)
		})
	}
}

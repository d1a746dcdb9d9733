package httpapi_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestAskContinuesTheAgentsTrace: the Go client sends the span in its
// context as a traceparent header, and the API parks the question under
// it: the ask's span is a child of the agent's, and the question stores
// the ask's span for whichever replica answers it.
func TestAskContinuesTheAgentsTrace(t *testing.T) {
	e := newEnv(t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	e.svc.SetTracing(tp)

	agentTP := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = agentTP.Shutdown(context.Background()) })
	ctx, turn := agentTP.Tracer("agent").Start(e.ctx(), "agent turn")
	defer turn.End()
	req := clarification("run-traced")
	q, err := e.as(agentA).Ask(ctx, req)
	if err != nil {
		t.Fatal(err)
	}

	var ask *tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name == "askbridge.ask" {
			ask = &s
		}
	}
	agent := turn.SpanContext()
	if ask == nil || ask.SpanContext.TraceID() != agent.TraceID() || ask.Parent.SpanID() != agent.SpanID() {
		t.Fatalf("ask span %+v, want a child of the agent's span %v", ask, agent)
	}
	stored, err := e.svc.Get(e.ctx(), q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if sc := stored.SpanContext(); sc.SpanID() != ask.SpanContext.SpanID() || sc.TraceFlags() != trace.FlagsSampled {
		t.Fatalf("stored %q, want the ask's span", stored.TraceParent)
	}
}

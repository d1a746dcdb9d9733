package mcp_test

import (
	"context"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
)

// TestToolCallContinuesTheTraceInMeta: a tool call whose _meta carries a
// W3C traceparent (where the MCP specification puts trace context) parks
// a question whose ask span is a child of the caller's span.
func TestToolCallContinuesTheTraceInMeta(t *testing.T) {
	e := newEnv(t, mcp.Options{RunID: "run-7"}, nil)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	e.svc.SetTracing(tp)

	const traceID, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	ch := e.call(e.ctx, &mcpsdk.CallToolParams{
		Meta: mcpsdk.Meta{"traceparent": "00-" + traceID + "-" + parent + "-01", "tracestate": "rojo=00f067aa0ba902b7"},
		Name: mcp.ToolClarification, Arguments: map[string]any{"question": "Which region?", "reversibility": "reversible"},
	})
	q := e.parked()
	e.answer(core.AnswerInput{QuestionID: q.ID, Text: "eu-west-1"})
	result(t, e.ctx, ch)

	var ask *tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name == "askbridge.ask" {
			ask = &s
		}
	}
	if ask == nil {
		t.Fatalf("no ask span among %d spans", len(exp.GetSpans()))
	}
	if ask.SpanContext.TraceID().String() != traceID || ask.Parent.SpanID().String() != parent {
		t.Fatalf("ask span in trace %s under %s, want trace %s under %s", ask.SpanContext.TraceID(), ask.Parent.SpanID(), traceID, parent)
	}
	if got := q.SpanContext(); got.TraceID().String() != traceID || got.SpanID() != ask.SpanContext.SpanID() {
		t.Fatalf("the question stored %q, want the ask span's context", q.TraceParent)
	}
}

package storetest

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/askbridge/askbridge/core"
)

func init() {
	register("TraceContextKeptThroughCloseAndRestart", testTraceContext)
}

// testTraceContext: the trace context a question was asked under
// (core.Question.TraceParent) reads back as written, after the question
// closes and after a restart, so any replica continues its trace.
func testTraceContext(t *testing.T, h Harness) {
	e := newEnv(t, h)
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	e.svc.SetTracing(tp)
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	q, err := e.svc.Ask(core.WithTraceParent(t.Context(), parent, ""), clarification("run-traced"))
	if err != nil {
		t.Fatal(err)
	}
	sc := q.SpanContext()
	if !sc.IsValid() || sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || sc.SpanID().String() == "00f067aa0ba902b7" {
		t.Fatalf("asked with trace context %q, want a span of its own in the caller's trace", q.TraceParent)
	}
	if got := e.get(q.ID).TraceParent; got != q.TraceParent {
		t.Fatalf("stored %q, want %q", got, q.TraceParent)
	}
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Text: "eu-west-1",
		Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"}}); err != nil {
		t.Fatal(err)
	}
	e.restart()
	if got := e.get(q.ID); got.TraceParent != q.TraceParent || got.State != core.StateAnswered {
		t.Fatalf("after the close and a restart: %q (%s), want %q", got.TraceParent, got.State, q.TraceParent)
	}
	// A question asked while tracing is off keeps none.
	e.svc.SetTracing(nil)
	if q := e.ask(clarification("run-untraced")); e.get(q.ID).TraceParent != "" {
		t.Fatalf("tracing off stored %q", e.get(q.ID).TraceParent)
	}
}

package core_test

import (
	"context"
	"fmt"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// BenchmarkAskAndAnswerTracing is one ask and its answer on the embedded
// store (no fsync), with tracing off (the yardstick), on with every trace
// sampled (the ask, resolve and wait spans, handed to an exporter that
// drops them), and on with none sampled.
func BenchmarkAskAndAnswerTracing(b *testing.B) {
	for _, v := range []struct {
		name    string
		sampler sdktrace.Sampler // nil: tracing off
	}{{"off", nil}, {"sampled", sdktrace.AlwaysSample()}, {"unsampled", sdktrace.NeverSample()}} {
		b.Run(v.name, func(b *testing.B) {
			svc := coretest.Service(b, coretest.OpenStore(b), coretest.Options{})
			if v.sampler != nil {
				tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(v.sampler), sdktrace.WithSyncer(tracetest.NewNoopExporter()))
				b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
				svc.SetTracing(tp)
			}
			ctx := core.WithTraceParent(b.Context(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "")
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "agent", RunID: "run",
					ToolCallID: fmt.Sprint("call-", i), Text: "Which region?", Reversibility: core.Reversible})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Text: "eu-west-1",
					Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

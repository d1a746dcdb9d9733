package core

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Tracing the human wait.
//
// core makes its spans itself with the OpenTelemetry API: the trace and
// propagation packages, which are interfaces and value types with no
// exporter, no I/O and no goroutine of their own. The program installs
// the SDK that exports them (cmd/askbridge/internal/app/otel.go, SetTracing); without
// it every helper here returns at once and nothing is stored. The spans
// are made here rather than behind the Observer hooks because two of them
// must be live while the work happens: the ask's span context is what the
// question stores, and a delivery's span is in the ctx its Courier sends
// with, so an outgoing request (a webhook) carries it onward.
//
// A question's life crosses replicas: it is asked on one, delivered by
// whichever claims its outbox entries, answered on any. So the ask's span
// context is stored with the question as a W3C traceparent
// (Question.TraceParent), and every later span of the question is made a
// child of that stored context, on whichever replica makes it:
//
//	askbridge.ask        the ask, a child of the agent's traceparent if it sent one
//	  askbridge.deliver  each delivery attempt to a surface (post, update, reminder)
//	  askbridge.resolve  each pass through the chokepoint (answer, vote, decline, timeout)
//	  askbridge.wait     the human wait, from the ask to the close, made at the close
//
// A resolve whose caller sent a trace of its own (an operator's API call,
// say) links to it. Spans carry ids, fixed words and configured names:
// never a question's text, an answer, or a person's name or id.

// tracerName names core's spans' instrumentation scope.
const tracerName = "github.com/askbridge/askbridge/core"

// spanTracer makes core's spans (Service.tracer, nil while tracing is off).
type spanTracer = trace.Tracer

// w3c reads and writes the W3C trace context text (traceparent, tracestate).
var w3c propagation.TraceContext

// SetTracing makes s trace with tp from now on; nil turns tracing off (the
// default). Call it before s serves anything.
func (s *Service) SetTracing(tp trace.TracerProvider) {
	if tp == nil {
		s.tracer = nil
		return
	}
	s.tracer = tp.Tracer(tracerName)
}

// WithTraceParent returns ctx continuing the W3C trace context a caller
// sent (a traceparent HTTP header, or the traceparent key of an MCP
// request's _meta, with its tracestate). An empty or malformed traceparent
// leaves ctx as it was: a bad header never fails a request.
func WithTraceParent(ctx context.Context, traceparent, tracestate string) context.Context {
	if traceparent == "" {
		return ctx
	}
	c := propagation.MapCarrier{"traceparent": traceparent}
	if tracestate != "" {
		c["tracestate"] = tracestate
	}
	return w3c.Extract(ctx, c)
}

// SpanContext is the trace context q was asked under (its ask's span),
// read from TraceParent; not valid when q was asked with tracing off.
func (q *Question) SpanContext() trace.SpanContext {
	return trace.SpanContextFromContext(WithTraceParent(context.Background(), q.TraceParent, ""))
}

// underQuestion is ctx with q's stored trace context as the parent of the
// spans started from it; ctx as it is if q has none.
func underQuestion(ctx context.Context, q *Question) context.Context {
	if sc := q.SpanContext(); sc.IsValid() {
		return trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	return ctx
}

// traceParentOf is the traceparent of the span in ctx, to store on a
// question; "" while tracing is off.
func (s *Service) traceParentOf(ctx context.Context) string {
	if s.tracer == nil {
		return ""
	}
	c := propagation.MapCarrier{}
	w3c.Inject(ctx, c)
	return c["traceparent"]
}

// traceAsk starts the ask's span, a child of the trace context the caller
// sent (WithTraceParent) or else a new trace's root; end finishes it with
// what the ask did.
func (s *Service) traceAsk(ctx context.Context) (context.Context, func(q *Question, repeat bool, err error)) {
	if s.tracer == nil {
		return ctx, func(*Question, bool, error) {}
	}
	ctx, span := s.tracer.Start(ctx, "askbridge.ask", trace.WithSpanKind(trace.SpanKindServer))
	return ctx, func(q *Question, repeat bool, err error) {
		if q != nil {
			span.SetAttributes(questionAttributes(q)...)
			span.SetAttributes(attribute.Bool("askbridge.repeat", repeat))
		}
		endSpan(span, err)
	}
}

// traceDelivery starts the span of one delivery attempt, a child of q's
// stored trace context (q is nil for a digest, which belongs to no
// question). The courier sends with the returned ctx.
func (s *Service) traceDelivery(ctx context.Context, d Delivery, q *Question) (context.Context, func(error)) {
	if s.tracer == nil {
		return ctx, func(error) {}
	}
	attrs := []attribute.KeyValue{
		attribute.String("askbridge.surface", string(d.Surface)),
		attribute.String("askbridge.delivery.kind", string(d.Kind)),
		attribute.Int("askbridge.delivery.attempt", d.Attempts),
	}
	if q != nil {
		ctx = underQuestion(ctx, q)
		attrs = append(attrs, attribute.String("askbridge.question.id", string(q.ID)))
	}
	ctx, span := s.tracer.Start(ctx, "askbridge.deliver", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx, func(err error) {
		if ra, ok := errors.AsType[*RetryAfter](err); ok {
			span.SetAttributes(attribute.Float64("askbridge.delivery.retry_after_seconds", ra.After.Seconds()))
		}
		// A NotYet is the send budget (or a card behind a busy question)
		// deferring the delivery: no attempt, and no failure of one. The
		// span starts before the gate is asked, so it says so rather than
		// showing every budget wait as a failed delivery.
		if ny, ok := errors.AsType[*NotYet](err); ok {
			span.SetAttributes(attribute.Bool("askbridge.delivery.deferred", true),
				attribute.Float64("askbridge.delivery.due_again_seconds", ny.After.Seconds()))
			err = nil
		}
		endSpan(span, err)
	}
}

// traceResolve records one pass through the chokepoint, from start to
// now, as a child of the question's stored trace context, and the human
// wait when this pass closed the question. It is made once the pass is
// over because only then is the question, and so its trace, known.
func (s *Service) traceResolve(ctx context.Context, start time.Time, a attempt, out Outcome, err error) {
	if s.tracer == nil {
		return
	}
	q := out.Question
	if closed, ok := errors.AsType[*ClosedError](err); ok {
		q = closed.Question
	}
	opts := []trace.SpanStartOption{trace.WithTimestamp(start), trace.WithAttributes(
		attribute.String("askbridge.op", a.op),
		attribute.String("askbridge.result", resolveResult(out, err)),
		attribute.String("askbridge.surface", string(a.actor.Surface)),
	)}
	if q != nil {
		caller := trace.SpanContextFromContext(ctx)
		ctx = underQuestion(ctx, q)
		if caller.IsValid() && caller.SpanID() != trace.SpanContextFromContext(ctx).SpanID() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: caller}))
		}
		opts = append(opts, trace.WithAttributes(attribute.String("askbridge.question.id", string(q.ID))))
	}
	_, span := s.tracer.Start(ctx, "askbridge.resolve", opts...)
	endSpan(span, err)
	if err == nil && out.Closed && out.Question != nil && out.Question.Resolution != nil {
		s.traceWait(ctx, out.Question)
	}
}

// traceWait records the human wait of q, just closed: from its ask to its
// close, with who or what closed it and how long the first person took to
// act on it.
func (s *Service) traceWait(ctx context.Context, q *Question) {
	r := q.Resolution
	attrs := []attribute.KeyValue{
		attribute.String("askbridge.question.id", string(q.ID)),
		attribute.String("askbridge.state", string(r.State)),
		attribute.String("askbridge.closer", string(CloserOf(q))),
		attribute.String("askbridge.closing_surface", string(ClosingSurface(q))),
	}
	if at, ok := firstHumanAction(q); ok {
		attrs = append(attrs, attribute.Float64("askbridge.wait.first_action_seconds", at.Sub(q.CreatedAt).Seconds()))
	}
	_, span := s.tracer.Start(ctx, "askbridge.wait", trace.WithTimestamp(q.CreatedAt), trace.WithAttributes(attrs...))
	span.End(trace.WithTimestamp(r.At))
}

// firstHumanAction is when a person first acted on q: the earliest vote,
// form item or batch call a person decided, or the close itself when a
// person closed it. Standing approvals, policy rules, timeouts, expiry and
// cancels are not people acting; false if no person has acted.
func firstHumanAction(q *Question) (time.Time, bool) {
	var first time.Time
	take := func(at time.Time) {
		if !at.IsZero() && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	for _, v := range q.Votes {
		take(v.At)
	}
	for _, a := range q.Answers {
		if a.DecidedBy() == CloserPerson {
			take(a.At)
		}
	}
	if q.Resolution != nil {
		switch CloserOf(q) {
		case CloserPerson, CloserQuorum, CloserDecline:
			take(q.Resolution.At)
		}
	}
	return first, !first.IsZero()
}

func questionAttributes(q *Question) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("askbridge.question.id", string(q.ID)),
		attribute.String("askbridge.kind", string(q.Kind)),
		attribute.String("askbridge.route", q.Route),
		attribute.String("askbridge.reversibility", string(q.Reversibility)),
	}
}

// endSpan ends span, marked failed with err's code (never its message,
// which may quote what a person wrote).
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, string(ErrorCode(err)))
	}
	span.End()
}

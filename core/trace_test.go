package core_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

// traced is a Service with an in-memory exporter of its own, as one
// replica with its own tracer provider.
func traced(t *testing.T, st core.Store, o coretest.Options) (*core.Service, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	svc := coretest.Service(t, st, o)
	svc.SetTracing(tp)
	return svc, exp
}

// agentTurn is an agent's own span and the traceparent it sends for it.
func agentTurn(t *testing.T) (trace.SpanContext, string) {
	t.Helper()
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx, span := tp.Tracer("agent").Start(context.Background(), "agent turn")
	defer span.End()
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return span.SpanContext(), c["traceparent"]
}

func spanNamed(t *testing.T, exp *tracetest.InMemoryExporter, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %s, want 1 (all: %v)", len(found), name, spanNames(exp))
	}
	return found[0]
}

func spanNames(exp *tracetest.InMemoryExporter) []string {
	var out []string
	for _, s := range exp.GetSpans() {
		out = append(out, s.Name)
	}
	return out
}

func attr(s tracetest.SpanStub, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// spanCourier posts every card and remembers the span context it was
// handed to post with.
type spanCourier struct {
	seen   *trace.SpanContext
	posted func()
}

func (spanCourier) Surface() core.Surface { return core.SurfaceSlack }

func (c spanCourier) Post(ctx context.Context, _ *core.Question, card core.MessageRef) (core.MessageRef, error) {
	*c.seen = trace.SpanContextFromContext(ctx)
	c.posted()
	card.ID = "1714564800.000100"
	return card, nil
}

func (spanCourier) Update(context.Context, *core.Question, core.MessageRef) error { return nil }
func (spanCourier) Remind(context.Context, *core.Question, string) error          { return nil }
func (spanCourier) Digest(context.Context, core.Digest, string) error             { return nil }

// TestOneTraceAcrossReplicas: an agent's ask on replica A, its card
// delivered by replica B and its answer taken on B make one trace, under
// the agent's own span: B reads the ask's trace context from the store.
func TestOneTraceAcrossReplicas(t *testing.T) {
	routes := map[string]core.Route{core.DefaultRoute: {
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}},
		Rooms:    []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}},
	}}
	st := coretest.OpenStore(t)
	a, expA := traced(t, st, coretest.Options{Routes: routes})
	b, expB := traced(t, st, coretest.Options{Routes: routes})
	agent, traceparent := agentTurn(t)

	q, err := a.Ask(core.WithTraceParent(t.Context(), traceparent, "vendor=1"), core.AskInput{Kind: core.KindClarification,
		Agent: "agent", RunID: "run-1", Text: "Which region?", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	ask := spanNamed(t, expA, "askbridge.ask")
	if ask.SpanContext.TraceID() != agent.TraceID() || ask.Parent.SpanID() != agent.SpanID() || !ask.Parent.IsRemote() {
		t.Fatalf("ask span %v under %v, want a child of the agent's span %v", ask.SpanContext, ask.Parent, agent)
	}
	if v, _ := attr(ask, "askbridge.question.id"); v.AsString() != string(q.ID) {
		t.Errorf("ask span names question %q, want %q", v.AsString(), q.ID)
	}
	stored, err := b.Get(t.Context(), q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if sc := stored.SpanContext(); sc.TraceID() != ask.SpanContext.TraceID() || sc.SpanID() != ask.SpanContext.SpanID() || !sc.IsSampled() {
		t.Fatalf("stored trace context %v (%q), want the ask's span %v", sc, stored.TraceParent, ask.SpanContext)
	}

	var seen trace.SpanContext
	ctx, stop := context.WithCancel(t.Context())
	if err := loops.Deliver(ctx, b, spanCourier{seen: &seen, posted: stop}, loops.DeliverOptions{Consumer: "b"}); err != nil {
		t.Fatal(err)
	}
	deliver := spanNamed(t, expB, "askbridge.deliver")
	if deliver.Parent.SpanID() != ask.SpanContext.SpanID() || deliver.SpanContext.TraceID() != agent.TraceID() {
		t.Fatalf("deliver span under %v, want the ask's span %v", deliver.Parent, ask.SpanContext)
	}
	if !seen.Equal(deliver.SpanContext) {
		t.Errorf("the courier posted under %v, want the deliver span %v", seen, deliver.SpanContext)
	}
	if v, _ := attr(deliver, "askbridge.surface"); v.AsString() != "slack" {
		t.Errorf("deliver span surface %q", v.AsString())
	}

	// The operator's own call carries a trace of its own: the resolve
	// links to it, and stays in the question's trace.
	operator, opParent := agentTurn(t)
	out, err := b.Answer(core.WithTraceParent(t.Context(), opParent, ""), core.AnswerInput{QuestionID: q.ID,
		Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"}, Text: "eu-west-1"})
	if err != nil || !out.Closed {
		t.Fatalf("answer: %+v %v", out, err)
	}
	resolve := spanNamed(t, expB, "askbridge.resolve")
	if resolve.Parent.SpanID() != ask.SpanContext.SpanID() || resolve.SpanContext.TraceID() != agent.TraceID() {
		t.Fatalf("resolve span under %v, want the ask's span %v", resolve.Parent, ask.SpanContext)
	}
	if len(resolve.Links) != 1 || resolve.Links[0].SpanContext.SpanID() != operator.SpanID() {
		t.Errorf("resolve span links %v, want the operator's span %v", resolve.Links, operator)
	}
	if v, _ := attr(resolve, "askbridge.result"); v.AsString() != core.ResolveClosed {
		t.Errorf("resolve result %q", v.AsString())
	}

	wait := spanNamed(t, expB, "askbridge.wait")
	if wait.Parent.SpanID() != ask.SpanContext.SpanID() || wait.SpanContext.TraceID() != agent.TraceID() {
		t.Fatalf("wait span under %v, want the ask's span %v", wait.Parent, ask.SpanContext)
	}
	closed := out.Question
	if !wait.StartTime.Equal(closed.CreatedAt) || !wait.EndTime.Equal(closed.Resolution.At) {
		t.Errorf("wait span %s to %s, want the ask %s to the close %s", wait.StartTime, wait.EndTime, closed.CreatedAt, closed.Resolution.At)
	}
	if v, _ := attr(wait, "askbridge.closer"); v.AsString() != string(core.CloserPerson) {
		t.Errorf("wait closer %q, want person", v.AsString())
	}
	first, ok := attr(wait, "askbridge.wait.first_action_seconds")
	if want := closed.Resolution.At.Sub(closed.CreatedAt).Seconds(); !ok || first.AsFloat64() != want {
		t.Errorf("first action after %v (%v), want %v", first.AsFloat64(), ok, want)
	}
	for _, s := range append(expA.GetSpans(), expB.GetSpans()...) {
		for _, kv := range s.Attributes {
			if v := kv.Value.Emit(); v == "eu-west-1" || v == "Which region?" || v == "ops" {
				t.Errorf("span %s carries what a person or agent wrote: %s=%s", s.Name, kv.Key, v)
			}
		}
	}
}

// TestTimeoutWaitHasNoHumanAction: a question nobody answered shows its
// wait closed by the timeout, and no first human action.
func TestTimeoutWaitHasNoHumanAction(t *testing.T) {
	clock := core.NewSimClock(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	st := coretest.OpenStore(t)
	svc, exp := traced(t, st, coretest.Options{Clock: clock})
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: "agent", RunID: "run-1",
		Text: "Which region?", Reversibility: core.Reversible, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ask := spanNamed(t, exp, "askbridge.ask")
	if ask.Parent.IsValid() {
		t.Fatalf("an ask without a traceparent has parent %v, want a new trace", ask.Parent)
	}
	clock.Advance(2 * time.Minute)
	if _, err := svc.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	wait := spanNamed(t, exp, "askbridge.wait")
	if wait.Parent.SpanID() != ask.SpanContext.SpanID() {
		t.Fatalf("wait span under %v, want the ask's span", wait.Parent)
	}
	if v, _ := attr(wait, "askbridge.closer"); v.AsString() != string(core.CloserTimeout) {
		t.Errorf("closer %q, want timeout", v.AsString())
	}
	if v, ok := attr(wait, "askbridge.wait.first_action_seconds"); ok {
		t.Errorf("a timeout has a first human action after %v", v.AsFloat64())
	}
	got, _ := svc.Get(t.Context(), q.ID)
	if got.State != core.StateTimedOut {
		t.Fatalf("state %s", got.State)
	}
}

// TestTracingOffStoresNothing: without SetTracing, a traceparent the
// agent sent is not stored, and the question has no trace context.
func TestTracingOffStoresNothing(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	_, traceparent := agentTurn(t)
	q, err := svc.Ask(core.WithTraceParent(t.Context(), traceparent, ""), core.AskInput{Kind: core.KindClarification,
		Agent: "agent", RunID: "run-1", Text: "Which region?", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := svc.Get(t.Context(), q.ID)
	if stored.TraceParent != "" || stored.SpanContext().IsValid() {
		t.Fatalf("tracing off stored %q", stored.TraceParent)
	}
}

// TestMalformedTraceParentIsIgnored: a bad header starts a new trace
// rather than failing the ask.
func TestMalformedTraceParentIsIgnored(t *testing.T) {
	for _, bad := range []string{"nonsense", "00-00000000000000000000000000000000-0000000000000000-01", "00-abc-def-01"} {
		ctx := core.WithTraceParent(t.Context(), bad, "")
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			t.Errorf("%q read as %v", bad, sc)
		}
	}
}

// TestPolicyCloseAtTheAsk: a rule that allows the call closes it inside
// the ask: the close's spans sit under the ask's span, link to nothing,
// and its wait shows the policy as closer and no person acting.
func TestPolicyCloseAtTheAsk(t *testing.T) {
	routes := coretest.APIRoutes()
	routes["guarded"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}},
		Rules: []core.Rule{{When: `tool == "read_file"`, Decide: core.DecideAllow}}}
	svc, exp := traced(t, coretest.OpenStore(t), coretest.Options{Routes: routes})
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "agent", RunID: "run-1", Route: "guarded",
		Text: "Read the config?", Reversibility: core.Reversible, Tool: "read_file", Arguments: []byte(`{"path":"a.yaml"}`)})
	if err != nil || q.State != core.StateAnswered {
		t.Fatalf("ask: %+v %v", q, err)
	}
	ask := spanNamed(t, exp, "askbridge.ask")
	for _, name := range []string{"askbridge.resolve", "askbridge.wait"} {
		s := spanNamed(t, exp, name)
		if s.Parent.SpanID() != ask.SpanContext.SpanID() || len(s.Links) != 0 {
			t.Errorf("%s under %v with links %v, want under the ask %v and no link", name, s.Parent, s.Links, ask.SpanContext)
		}
	}
	wait := spanNamed(t, exp, "askbridge.wait")
	if v, _ := attr(wait, "askbridge.closer"); v.AsString() != string(core.CloserPolicy) {
		t.Errorf("closer %q, want policy", v.AsString())
	}
	if _, ok := attr(wait, "askbridge.wait.first_action_seconds"); ok {
		t.Error("a policy close has a first human action")
	}
}

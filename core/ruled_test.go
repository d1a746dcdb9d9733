package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// failingCommits is the real store with its next commits failing, as when
// the store fails (or the bridge stops) between parking a question and
// closing it as a policy rule decided.
type failingCommits struct {
	core.Store
	fail atomic.Int32
}

func (s *failingCommits) Commit(ctx context.Context, c core.Change) (*core.Question, error) {
	if s.fail.Add(-1) >= 0 {
		return nil, errors.New("failingCommits: the store is gone")
	}
	return s.Store.Commit(ctx, c)
}

// ruledRules deny fetch, and deny writing /b.
var ruledRules = []core.Rule{
	{When: `tool == "fetch"`, Decide: core.DecideDeny, Reason: "No network."},
	{When: `tool == "write_file" && args.path == "/b"`, Decide: core.DecideDeny},
}

// ruledConfig is a configuration whose default route has rules.
func ruledConfig(rules ...core.Rule) core.Config {
	routes := coretest.APIRoutes()
	r := routes[core.DefaultRoute]
	r.Rules = rules
	routes[core.DefaultRoute] = r
	return core.Config{Routes: routes, ActorKey: []byte("k")}
}

// ruledService is a service whose default route has ruledRules, on a
// store whose first commit fails.
func ruledService(t *testing.T) *core.Service {
	t.Helper()
	st := &failingCommits{Store: coretest.OpenStore(t)}
	svc, err := core.New(st, ruledConfig(ruledRules...), nil)
	if err != nil {
		t.Fatal(err)
	}
	st.fail.Store(1)
	return svc
}

// parkedNotClosed asks in, whose close by its rules fails (ruledService),
// and returns the question it left parked, open.
func parkedNotClosed(t *testing.T, svc *core.Service, in core.AskInput) core.QuestionID {
	t.Helper()
	if _, err := svc.Ask(t.Context(), in); err == nil {
		t.Fatal("the ask's close did not fail: the test tests nothing")
	}
	open, _, err := svc.ListOpen(t.Context(), "", 10)
	if err != nil || len(open) != 1 {
		t.Fatalf("parked: %d, %v", len(open), err)
	}
	return open[0].ID
}

var ops = core.Decider{Surface: core.SurfaceAPI, ID: "ops", Name: "ops"}

// TestARuledApprovalNoPersonDecides: an approval a policy rule denied,
// parked but not yet closed (the store failed between the two), is not
// for a person to approve; the agent's repeat of the ask closes it as the
// rule said. Before, a person could approve what the rule denied, and the
// repeat returned the question open.
func TestARuledApprovalNoPersonDecides(t *testing.T) {
	svc := ruledService(t)
	in := core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", ToolCallID: "toolu_1", Text: "Fetch?",
		Reversibility: core.Reversible, Tool: "fetch", Arguments: json.RawMessage(`{"url":"https://example.com"}`)}
	id := parkedNotClosed(t, svc, in)
	if _, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: id, Decider: ops, OptionID: core.ApproveOption}); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("a person approving what a rule denied: %v, want conflict", err)
	}
	// Nor declining it: the agent would be told to go on by its own
	// judgement with a call the operator's rule denied.
	if _, err := svc.Decline(t.Context(), id, ops); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("a person declining what a rule denied: %v, want conflict", err)
	}
	q, repeat, err := svc.AskOrRepeat(t.Context(), in)
	if err != nil || !repeat || q.ID != id || q.Open() || q.Resolution.Approved == nil || *q.Resolution.Approved || q.Resolution.ClosedBy != core.CloserPolicy {
		t.Fatalf("the repeated ask: %+v (repeat %v), %v; want it denied by the rule", q, repeat, err)
	}
}

// TestARuledCallNoPersonDecides: the same for a batch's call: "approve
// all" leaves the call a rule denied, deciding it by name is refused, and
// the repeat of the ask records the rule's deny, closing the batch.
func TestARuledCallNoPersonDecides(t *testing.T) {
	svc := ruledService(t)
	in := batchAsk() // c1 writes /a, c2 writes /b
	in.IdempotencyKey = "batch-1"
	id := parkedNotClosed(t, svc, in)
	o, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: id, Decider: ops, OptionID: core.ApproveOption})
	if err != nil || o.Closed || len(o.Question.Answers) != 1 || o.Question.Answers[0].ItemID != "c1" {
		t.Fatalf("approve all: %+v, %v; want c1 alone approved", o.Question, err)
	}
	if _, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: id, Decider: ops,
		Calls: []core.CallDecision{{ToolCallID: "c2", OptionID: core.ApproveOption}}}); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("a person approving the call a rule denied: %v, want conflict", err)
	}
	q, repeat, err := svc.AskOrRepeat(t.Context(), in)
	if err != nil || !repeat || q.Open() {
		t.Fatalf("the repeated ask: %+v (repeat %v), %v; want the batch closed", q, repeat, err)
	}
	if a, ok := q.Answered("c2"); !ok || a.OptionID != core.DenyOption || a.Policy == nil {
		t.Fatalf("c2 after the repeat: %+v; want denied by the rule", a)
	}
	if again, repeat, err := svc.AskOrRepeat(t.Context(), in); err != nil || !repeat || again.Open() {
		t.Fatalf("a third ask: %+v, %v", again, err)
	}
}

// TestARuledRepeatAfterAReloadMovedItsRule: the repeat of an ask a rule
// decided, parked but not closed, closes it as the rules still decide it
// after a reload that added a rule before theirs (so that theirs is now
// rule 2, not 1). Before, the repeat closed it only if the very rule of
// the same number decided it, so it stayed open, and as no person may
// decide what a rule decided, nobody could close it before its deadline.
func TestARuledRepeatAfterAReloadMovedItsRule(t *testing.T) {
	svc := ruledService(t)
	one := core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", ToolCallID: "toolu_1", Text: "Fetch?",
		Reversibility: core.Reversible, Tool: "fetch", Arguments: json.RawMessage(`{"url":"https://example.com"}`)}
	id := parkedNotClosed(t, svc, one)
	moved := append([]core.Rule{{When: `tool == "deploy"`, Decide: core.DecideAsk, Reversibility: core.HardToReverse}}, ruledRules...)
	if err := svc.Reconfigure(ruledConfig(moved...)); err != nil {
		t.Fatal(err)
	}
	q, repeat, err := svc.AskOrRepeat(t.Context(), one)
	if err != nil || !repeat || q.ID != id || q.Open() || q.Resolution.Approved == nil || *q.Resolution.Approved || q.Resolution.ClosedBy != core.CloserPolicy {
		t.Fatalf("the repeated ask: %+v (repeat %v), %v; want it denied by the rule", q, repeat, err)
	}

	// A batch's call alike.
	svc = ruledService(t)
	batch := batchAsk() // c1 writes /a, c2 writes /b
	batch.IdempotencyKey = "batch-1"
	id = parkedNotClosed(t, svc, batch)
	if err := svc.Reconfigure(ruledConfig(moved...)); err != nil {
		t.Fatal(err)
	}
	if q, _, err = svc.AskOrRepeat(t.Context(), batch); err != nil || q.ID != id {
		t.Fatalf("the repeated batch: %+v, %v", q, err)
	}
	if a, ok := q.Answered("c2"); !ok || a.OptionID != core.DenyOption || a.Policy == nil {
		t.Fatalf("c2 after the repeat: %+v; want denied by the rule", a)
	}
}

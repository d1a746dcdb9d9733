package core_test

import (
	"encoding/json"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestABrokenRuleLetsNoStandingApprovalThrough: a rule that cannot be
// evaluated for an ask (here a key the arguments lack, or a number JSON
// can carry and Go cannot) stops the rules, and the call goes to a
// person: no standing approval covers it, since the rules after the
// broken one (a deny among them) never ran. Before, the standing approval
// closed it as approved, nobody asked.
func TestABrokenRuleLetsNoStandingApprovalThrough(t *testing.T) {
	routes := coretest.APIRoutes()
	r := routes[core.DefaultRoute]
	r.Rules = []core.Rule{{When: `tool == "shell" && args.command.contains("rm")`, Decide: core.DecideDeny}}
	routes[core.DefaultRoute] = r
	svc, err := core.New(coretest.OpenStore(t), core.Config{Routes: routes, ActorKey: []byte("k")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ask := func(id, args string) *core.Question {
		t.Helper()
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", ToolCallID: id, Text: "Run it?",
			Reversibility: core.Reversible, Tool: "shell", Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("ask %s: %v", args, err)
		}
		return q
	}
	first := ask("t1", `{"command":"ls"}`)
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: first.ID, Decider: ops, OptionID: core.ApproveOption,
		Standing: &core.StandingRequest{Scope: core.StandingRun}}); err != nil {
		t.Fatal(err)
	}
	for i, args := range []string{`{"cmd":"rm -rf ~"}`, `{"command":"rm -rf ~","pad":1e400}`} {
		q := ask("t"+string(rune('2'+i)), args)
		if !q.Open() {
			t.Errorf("%s: closed %+v by %s; want it asked of a person", args, q.Resolution, core.CloserOf(q))
		}
	}
	// In a batch, the call the broken rule stopped at waits for a person;
	// the standing approval covers the other.
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", Text: "Run both?",
		Reversibility: core.Reversible, Calls: []core.CallInput{
			{ToolCallID: "b1", Tool: "shell", Arguments: json.RawMessage(`{"cmd":"rm -rf ~"}`)},
			{ToolCallID: "b2", Tool: "shell", Arguments: json.RawMessage(`{"command":"ls"}`)},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if left := q.UndecidedCalls(); len(left) != 1 || left[0].ToolCallID != "b1" {
		t.Errorf("the batch's undecided calls: %+v; want b1 alone", left)
	}
}

package core_test

import (
	"encoding/json"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestABrokenRuleKeepsALaterAskRulesShape: an agent that leaves out the
// key an earlier rule reads (or pads its arguments past that rule's cost
// limit) stops the rules there, but the ask rule after it that matches
// still shapes the ask: a rm -rf the rules send to two leads as hard to
// reverse goes to the leads, as it would with the key given. Before,
// the broken rule dropped the shape, and the rm was asked of any one
// decider on the agent's route, as reversible as the agent said.
func TestABrokenRuleKeepsALaterAskRulesShape(t *testing.T) {
	api := map[core.Surface][]string{core.SurfaceAPI: {"*"}}
	routes := coretest.APIRoutes()
	routes["leads"] = core.Route{Deciders: api, MaxQuorum: 2}
	routes["g"] = core.Route{Deciders: api, Rules: []core.Rule{
		{Name: "safe", When: `tool == "Bash" && args.mode == "safe"`, Decide: core.DecideAllow},
		{Name: "rm", When: `tool == "Bash" && args.command.contains("rm")`, Route: "leads", Reversibility: core.HardToReverse, Quorum: 2},
		{Name: "bash", When: `tool == "Bash"`, Reversibility: core.Reversible},
	}}
	svc, err := core.New(coretest.OpenStore(t), core.Config{Routes: routes, ActorKey: []byte("k")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ask := func(id, args string) core.AskInput {
		return core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", ToolCallID: id, Route: "g", Text: "Run?",
			Reversibility: core.Reversible, Tool: "Bash", Arguments: json.RawMessage(args)}
	}
	for _, args := range []string{`{"mode":"x","command":"rm -rf /"}`, `{"command":"rm -rf /"}`} {
		q, err := svc.Ask(ctx, ask("rm "+args, args))
		if err != nil {
			t.Fatal(err)
		}
		if !q.Open() || q.Route != "leads" || q.Quorum != 2 || q.Reversibility != core.HardToReverse || q.Rule == nil || q.Rule.Index != 1 {
			t.Errorf("%s: asked on %s, quorum %d, %s, rule %+v; want it asked of two leads as hard to reverse (rule 1)",
				args, q.Route, q.Quorum, q.Reversibility, q.Rule)
		}
	}
	v, err := svc.Evaluate(ask("e", `{"command":"rm -rf /"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `a rule could not be evaluated, so no later rule may allow it and no standing approval covers it (routes.g.rules[0].when: no such key: mode); ` +
		`policy rule 1 of route "g" ("rm") matched: asked with route leads, reversibility hard_to_reverse, quorum 2`
	if got := v.Explain(); got != want {
		t.Errorf("policy test says %q\nwant %q", got, want)
	}

	// The shape a rule gives past a broken one is no grounds for a
	// standing approval: the broken rule might have denied the call.
	first, err := svc.Ask(ctx, ask("ls", `{"mode":"x","command":"ls"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: first.ID, Decider: ops, OptionID: core.ApproveOption,
		Standing: &core.StandingRequest{Scope: core.StandingRun}}); err != nil {
		t.Fatal(err)
	}
	if q, err := svc.Ask(ctx, ask("ls2", `{"command":"ls"}`)); err != nil || !q.Open() || q.Rule == nil || q.Rule.Index != 2 {
		t.Errorf("ls without a mode: %+v, %v; want it asked of a person, shaped by rule 2", q, err)
	}

	// In a batch the same: the rm's rule asks a quorum, which no batch
	// takes, whether the agent gave the mode or not.
	for _, args := range []string{`{"mode":"x","command":"rm -rf /"}`, `{"command":"rm -rf /"}`} {
		in := ask("", "")
		in.Tool, in.Arguments, in.Calls = "", nil, []core.CallInput{
			{ToolCallID: "b1", Tool: "Bash", Arguments: json.RawMessage(args)},
			{ToolCallID: "b2", Tool: "Bash", Arguments: json.RawMessage(`{"mode":"x","command":"ls"}`)},
		}
		if q, err := svc.Ask(ctx, in); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("a batch with %s: %+v, %v; want it refused, as the rm's rule asks two people", args, q, err)
		}
	}
}

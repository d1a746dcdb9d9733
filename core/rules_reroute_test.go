package core_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// rerouteRoutes: route claude-code sends every Bash call to route ops,
// whose own rules deny an rm -rf outright, allow an ls, and ask the rest
// as reversible; routes a and b send a call named loop to each other.
func rerouteRoutes() map[string]core.Route {
	api := map[core.Surface][]string{core.SurfaceAPI: {"*"}}
	routes := coretest.APIRoutes()
	routes["claude-code"] = core.Route{Deciders: api, Rules: []core.Rule{
		{Name: "deploys", When: `tool == "Bash" && args.command.startsWith("deploy")`, Route: "ops", Reversibility: core.HardToReverse},
		{Name: "bash to ops", When: `tool == "Bash"`, Route: "ops"},
	}}
	routes["ops"] = core.Route{Deciders: api, Rules: []core.Rule{
		{Name: "no rm", When: `tool == "Bash" && args.command.contains("rm -rf")`, Decide: core.DecideDeny, Reason: "No rm -rf."},
		{Name: "ls", When: `tool == "Bash" && args.command == "ls"`, Decide: core.DecideAllow},
		{Name: "bash", When: `tool == "Bash"`, Reversibility: core.Reversible},
	}}
	routes["a"] = core.Route{Deciders: api, Rules: []core.Rule{{When: `tool == "loop"`, Route: "b"}}}
	routes["b"] = core.Route{Deciders: api, Rules: []core.Rule{{When: `tool == "loop"`, Route: "a"}}}
	return routes
}

// TestARerouteRunsTheTargetRoutesRules: an ask rule that sends a call to
// another route hands it to that route's rules, so a deny there denies
// it: before, the rules of the route it was sent to never ran, and an rm
// -rf that route ops denies was asked of ops' people when the agent asked
// on claude-code. Those rules only tighten the ask: an allow there does
// not approve what the rule that sent it asked people about, and a
// catch-all there does not undo its hard to reverse. A reroute back to a
// route whose rules already ran ends the chain.
func TestARerouteRunsTheTargetRoutesRules(t *testing.T) {
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: rerouteRoutes()})
	ctx := t.Context()
	ask := func(route, id, command string) core.AskInput {
		return core.AskInput{Kind: core.KindApproval, Agent: "ag", RunID: "r1", ToolCallID: id, Route: route, Text: "Run it?",
			Reversibility: core.Reversible, Tool: "Bash", Arguments: json.RawMessage(`{"command":"` + command + `"}`)}
	}
	for _, route := range []string{"ops", "claude-code"} {
		q, err := svc.Ask(ctx, ask(route, "rm "+route, "rm -rf /"))
		if err != nil {
			t.Fatal(err)
		}
		if q.Open() || core.CloserOf(q) != core.CloserPolicy || *q.Resolution.Approved || q.Rule == nil || q.Rule.Route != "ops" || q.Rule.Index != 0 {
			t.Errorf("rm -rf asked on %s: %s by %s, rule %+v; want it denied by ops' rule 0", route, q.State, core.CloserOf(q), q.Rule)
		}
	}
	for _, c := range []struct {
		command string
		rev     core.Reversibility
	}{{"ls", core.Reversible}, {"make", core.Reversible}, {"deploy prod", core.HardToReverse}} {
		q, err := svc.Ask(ctx, ask("claude-code", c.command, c.command))
		if err != nil {
			t.Fatal(err)
		}
		if !q.Open() || q.Route != "ops" || q.Reversibility != c.rev {
			t.Errorf("%s: %s on %s, %s; want it asked on ops as %s", c.command, q.State, q.Route, q.Reversibility, c.rev)
		}
	}
	loop := ask("a", "loop", "x")
	loop.Tool = "loop"
	if q, err := svc.Ask(ctx, loop); err != nil || !q.Open() || q.Route != "a" {
		t.Errorf("a call a and b send to each other: %+v, %v; want it asked on a", q, err)
	}

	v, err := svc.Evaluate(ask("claude-code", "e", "rm -rf /"))
	if err != nil {
		t.Fatal(err)
	}
	want := `policy rule 1 of route "claude-code" ("bash to ops") matched: asked with route ops; ` +
		`then on route "ops": policy rule 0 of route "ops" ("no rm") denies it at once, nobody is asked: No rm -rf.`
	if got := v.Explain(); got != want {
		t.Errorf("policy test says %q\nwant %q", got, want)
	}
	v, err = svc.Evaluate(ask("claude-code", "e", "ls"))
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Explain(); !strings.Contains(got, `then on route "ops": policy rule 1 of route "ops" ("ls") would allow it, but it was sent there to be asked of a person`) {
		t.Errorf("policy test on ls says %q", got)
	}

	// A batch's calls each go the way an approval of that call would.
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "ag", RunID: "r1", Route: "claude-code", Text: "Run both?",
		Reversibility: core.Reversible, Calls: []core.CallInput{
			{ToolCallID: "b1", Tool: "Bash", Arguments: json.RawMessage(`{"command":"rm -rf ~"}`)},
			{ToolCallID: "b2", Tool: "Bash", Arguments: json.RawMessage(`{"command":"make"}`)},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if left := q.UndecidedCalls(); !q.Open() || q.Route != "ops" || len(left) != 1 || left[0].ToolCallID != "b2" {
		t.Errorf("the batch: %s on %s, undecided %+v; want b1 denied at the ask and b2 asked on ops", q.State, q.Route, left)
	}
	vs, err := svc.EvaluateCalls(core.AskInput{Kind: core.KindApproval, Route: "claude-code", Calls: []core.CallInput{
		{ToolCallID: "b1", Tool: "Bash", Arguments: json.RawMessage(`{"command":"rm -rf ~"}`)}}})
	if err != nil || len(vs) != 1 || vs[0].Rule == nil || vs[0].Rule.Decide != core.DecideDeny {
		t.Errorf("policy test of the batch: %+v, %v; want its call denied", vs, err)
	}
}

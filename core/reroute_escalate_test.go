package core_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestARerouteThatLeavesNoEscalationNamesTheRule: an ask made with
// on_timeout escalate on a route that escalates, sent by a route's rule
// to one that does not, is refused with a message that says the rule
// sent it there, naming the rule and the route the agent asked on.
// Before, the refusal read `on_timeout escalate needs route "ops" to
// name escalate_to`: a route the agent never chose, and nothing said
// why the ask went there. An ask on a route without escalate_to that no
// rule moved keeps its plain refusal, and a reroute to a route that
// escalates is asked.
func TestARerouteThatLeavesNoEscalationNamesTheRule(t *testing.T) {
	api := map[core.Surface][]string{core.SurfaceAPI: {"*"}}
	routes := coretest.APIRoutes()
	routes["claude-code"] = core.Route{Deciders: api, EscalateTo: "leads", Rules: []core.Rule{
		{Name: "deploys to sre", When: `tool == "Bash" && args.command.startsWith("deploy")`, Route: "sre"},
		{Name: "bash to ops", When: `tool == "Bash"`, Route: "ops"},
	}}
	routes["ops"] = core.Route{Deciders: api}
	routes["sre"] = core.Route{Deciders: api, EscalateTo: "leads"}
	routes["leads"] = core.Route{Deciders: api}
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: routes})
	ctx := t.Context()
	ask := func(route, id, command string) core.AskInput {
		return core.AskInput{Kind: core.KindApproval, Agent: "ag", RunID: "r1", ToolCallID: id, Route: route, Text: "Run it?",
			Reversibility: core.Reversible, Tool: "Bash", Arguments: json.RawMessage(`{"command":"` + command + `"}`),
			OnTimeout: core.OnTimeoutEscalate}
	}
	const want = `policy rule 1 of route "claude-code" ("bash to ops") sent it from route "claude-code" to route "ops", ` +
		`which names no escalate_to, so on_timeout escalate has nowhere to go`
	_, err := svc.Ask(ctx, ask("claude-code", "make", "make"))
	if core.ErrorCode(err) != core.CodeInvalid || !strings.Contains(err.Error(), want) {
		t.Errorf("a call rerouted to ops: %v\nwant invalid, saying %q", err, want)
	}
	batch := core.AskInput{Kind: core.KindApproval, Agent: "ag", RunID: "r1", Route: "claude-code", Text: "Run both?",
		Reversibility: core.Reversible, OnTimeout: core.OnTimeoutEscalate, Calls: []core.CallInput{
			{ToolCallID: "b1", Tool: "Bash", Arguments: json.RawMessage(`{"command":"make"}`)},
			{ToolCallID: "b2", Tool: "Bash", Arguments: json.RawMessage(`{"command":"make test"}`)},
		}}
	if _, err := svc.Ask(ctx, batch); core.ErrorCode(err) != core.CodeInvalid || !strings.Contains(err.Error(), want) {
		t.Errorf("a batch rerouted to ops: %v\nwant invalid, saying %q", err, want)
	}

	// The agent's own choice of a route without escalate_to.
	_, err = svc.Ask(ctx, ask("ops", "own", "make"))
	if core.ErrorCode(err) != core.CodeInvalid || !strings.Contains(err.Error(), `on_timeout escalate needs route "ops" to name escalate_to`) ||
		strings.Contains(err.Error(), "policy rule") {
		t.Errorf("an ask on ops itself: %v", err)
	}
	// A reroute to a route that escalates is asked there.
	q, err := svc.Ask(ctx, ask("claude-code", "deploy", "deploy prod"))
	if err != nil || q.Route != "sre" || q.OnTimeout != core.OnTimeoutEscalate {
		t.Errorf("a call rerouted to sre: %+v, %v; want it asked on sre, escalating", q, err)
	}
}

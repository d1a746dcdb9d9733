package core_test

import (
	"encoding/json"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestCoveredNotWhereALabelRuleAlwaysFails: the rules see two labels,
// "project" and "task"; a condition reading another (labels.team) fails
// for every ask, which stops the rules, and each call is asked of a
// person with no standing approval covering it. So no host may be told
// to stop asking about the tool, nor about one call of it. Before, the
// labels, unknown whole to EveryCallCovered and CallCovered, left such a
// rule "may match" instead of failing, and a reversible Bash was covered:
// a host rule would have let every later Bash run unasked, though
// askbridge itself asks a person about each one.
func TestCoveredNotWhereALabelRuleAlwaysFails(t *testing.T) {
	api := map[core.Surface][]string{core.SurfaceAPI: {"*"}}
	routes := coretest.APIRoutes()
	routes["hooks"] = core.Route{Deciders: api, Rules: []core.Rule{
		{When: `tool == "Bash" && labels.team == "ops"`, Decide: core.DecideAllow},
		{When: `tool == "Edit" && labels.project == "web"`, Decide: core.DecideAllow},
	}}
	svc, err := core.New(coretest.OpenStore(t), core.Config{Routes: routes, ActorKey: []byte("k")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(tool string) core.AskInput {
		return core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "s1", Route: "hooks", Tool: tool,
			Arguments: json.RawMessage(`{"command":"ls"}`), Reversibility: core.Reversible, Labels: core.Labels{Project: "web"}}
	}
	if v, err := svc.Evaluate(ask("Bash")); err != nil || v.Err == nil {
		t.Fatalf("Bash: verdict %+v, %v; want the rule to fail", v, err)
	}
	if svc.EveryCallCovered(ask("Bash")) {
		t.Error("every Bash call: covered, want not (each stops the rules and is asked of a person)")
	}
	if svc.CallCovered(ask("Bash")) {
		t.Error("this Bash call: covered, want not (it stops the rules and is asked of a person)")
	}
	// A rule reading a label the rules do have still may match: an
	// allow, so the Edit is left to the allow or the asker's reversible.
	if !svc.EveryCallCovered(ask("Edit")) || !svc.CallCovered(ask("Edit")) {
		t.Error("Edit, allowed in project web and reversible elsewhere: not covered, want covered")
	}
}

package core_test

import (
	"encoding/json"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestCallCoveredNotWhereARuleErrs: a rule that cannot be evaluated for a
// call in some project (it reads a key the call's arguments lack, there)
// stops the rules in that project, and the call is asked of a person
// with no standing approval covering it; so no host may be told to stop
// asking about the call, in that project or in one it moves from. Before,
// the labels being unknown hid the error (an unknown && an error is
// unknown), and a reversible call was covered, even asked from the very
// project whose rule errs.
func TestCallCoveredNotWhereARuleErrs(t *testing.T) {
	api := map[core.Surface][]string{core.SurfaceAPI: {"*"}}
	routes := coretest.APIRoutes()
	routes["hooks"] = core.Route{Deciders: api, Rules: []core.Rule{
		{When: `labels.project == "infra" && args.mode == "safe"`, Decide: core.DecideAllow},
	}}
	svc, err := core.New(coretest.OpenStore(t), core.Config{Routes: routes, ActorKey: []byte("k")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(project string) core.AskInput {
		return core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "s1", Route: "hooks", Tool: "Bash",
			Arguments: json.RawMessage(`{"command":"ls"}`), Reversibility: core.Reversible, Labels: core.Labels{Project: project}}
	}
	if v, err := svc.Evaluate(ask("infra")); err != nil || v.Err == nil {
		t.Fatalf("in project infra: verdict %+v, %v; want the rule to fail", v, err)
	}
	for _, project := range []string{"infra", "web"} {
		if svc.CallCovered(ask(project)) {
			t.Errorf("asked from project %s: covered, want not (in infra the rule fails and a person is asked)", project)
		}
	}
	// Where the rule cannot fail, the call is left to the asker's
	// reversible.
	routes["hooks"] = core.Route{Deciders: api, Rules: []core.Rule{
		{When: `labels.project == "infra" && has(args.mode) && args.mode == "safe"`, Decide: core.DecideAllow},
	}}
	if svc, err = core.New(coretest.OpenStore(t), core.Config{Routes: routes, ActorKey: []byte("k")}, nil); err != nil {
		t.Fatal(err)
	}
	if !svc.CallCovered(ask("web")) {
		t.Error("a rule that cannot fail: not covered, want covered")
	}
}

package core_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestADenyPastABrokenRuleNamesIt: when a rule cannot be evaluated and a
// later deny decides the call all the same, the asked event names the
// broken rule as well as the deny, as README's "Fail closed" says ("the
// asked event says which rule failed"): the operator reading the log
// learns that a rule of theirs fails on this call, and that the deny
// only decided because it came later. Before, the event named the deny
// alone, as if the rules had run cleanly. The same holds for a call of a
// batch, and for a deny on a route an ask rule sent the call to.
func TestADenyPastABrokenRuleNamesIt(t *testing.T) {
	api := map[core.Surface][]string{core.SurfaceAPI: {"*"}}
	routes := coretest.APIRoutes()
	routes["g"] = core.Route{Deciders: api, Rules: []core.Rule{
		{Name: "mode", When: `tool == "Bash" && args.mode == "safe"`, Decide: core.DecideAllow},
		{Name: "no-rm", When: `tool == "Bash" && args.command.contains("rm -rf")`, Decide: core.DecideDeny},
	}}
	routes["front"] = core.Route{Deciders: api, Rules: []core.Rule{{Name: "to g", When: `tool == "Bash"`, Route: "g"}}}
	svc, st := coretest.Open(t, coretest.Options{Routes: routes})
	ctx := t.Context()
	const broken = "routes.g.rules[0].when: no such key: mode"
	for _, route := range []string{"g", "front"} {
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", ToolCallID: "rm " + route, Route: route,
			Text: "Run?", Reversibility: core.Reversible, Tool: "Bash", Arguments: json.RawMessage(`{"command":"rm -rf ~"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if q.Open() || q.Rule == nil || q.Rule.Route != "g" || q.Rule.Index != 1 {
			t.Fatalf("asked on %s: %s, rule %+v; want it denied by rule 1 of g", route, q.State, q.Rule)
		}
		if why := askedReason(t, st, q); !strings.Contains(why, broken) || !strings.Contains(why, `policy rule 1 of route "g" ("no-rm")`) {
			t.Errorf("asked on %s, the asked event says %q; want it to name the broken rule (%s) and the deny", route, why, broken)
		}
	}
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Route: "g", Text: "Run both?",
		Reversibility: core.Reversible, Calls: []core.CallInput{
			{ToolCallID: "b1", Tool: "Bash", Arguments: json.RawMessage(`{"command":"rm -rf ~"}`)},
			{ToolCallID: "b2", Tool: "Bash", Arguments: json.RawMessage(`{"mode":"x","command":"ls"}`)},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if why := askedReason(t, st, q); !strings.Contains(why, `call "b1": `) || !strings.Contains(why, broken) {
		t.Errorf("the batch's asked event says %q; want call b1's clause to name the broken rule (%s)", why, broken)
	}
}

package core_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestAPinsStepsShareOneBudget: the rules a door runs through one pin,
// over several forms of an ask, are within one budget, as the rules of
// one ask are (law 9); and the ask it then makes of a form it already
// evaluated is decided by the verdict it reached, not by a second run,
// which spends nothing more and cannot find the budget spent. The ask
// rule's shaping still applies to the question asked.
func TestAPinsStepsShareOneBudget(t *testing.T) {
	api := map[core.Surface][]string{core.SurfaceAPI: {"*"}}
	routes := coretest.APIRoutes()
	routes["g"] = core.Route{Deciders: api, Rules: []core.Rule{
		{Name: "x", When: `tool == "x" && args.command == "x"`, Decide: core.DecideAllow},
		{Name: "to ops", When: `tool == "t"`, Route: "ops", Reversibility: core.Reversible},
	}}
	routes["ops"] = core.Route{Deciders: api}
	svc, st := coretest.Open(t, coretest.Options{Routes: routes})
	ask := func(id, command string) core.AskInput {
		return core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", ToolCallID: id, Route: "g", Text: "Run?",
			Reversibility: core.HardToReverse, Tool: "t", Arguments: json.RawMessage(`{"command":"` + command + `"}`)}
	}
	matched := func(v core.RuleVerdict, err error) bool { return err == nil && v.Err == nil && v.Use.Name == "to ops" }

	pin := svc.Pin()
	defer pin.Close()
	if v, err := pin.Evaluate(ask("t1", "make")); !matched(v, err) {
		t.Fatalf("the first step: %+v, %v, %v; want rule 1 matched", v.Use, v.Err, err)
	}
	spent := core.PinnedSpent(pin)
	if v, err := pin.Evaluate(ask("t9", "make")); !matched(v, err) || spent == 0 || core.PinnedSpent(pin) != spent {
		t.Fatalf("the same form again: %+v, %v, %v, spent %d then %d; want its verdict again, for nothing more", v.Use, v.Err, err, spent, core.PinnedSpent(pin))
	}
	// What the steps spent stays spent: with the budget's share before
	// its reserve used up, another form's rules stop at the first.
	core.SpendPinned(pin, 3_000_000)
	if v, err := pin.Evaluate(ask("t1", "make all")); err != nil || v.Err == nil || !strings.Contains(v.Err.Error(), "used up their budget") {
		t.Fatalf("another form: %+v, %v, %v; want the rules stopped by the budget the pin spent", v.Use, v.Err, err)
	}
	if v, err := svc.Evaluate(ask("t1", "make all")); !matched(v, err) {
		t.Fatalf("that form unpinned: %+v, %v, %v; want rule 1 matched within a budget of its own", v.Use, v.Err, err)
	}
	// The ask of the first form (another call id, as a door's chain gives
	// it) is decided as the first step saw it, and shaped by its rule.
	q, _, err := pin.AskOrRepeat(t.Context(), ask("t2", "make"))
	if err != nil || !q.Open() || q.Route != "ops" || q.Reversibility != core.Reversible || q.Rule == nil || q.Rule.Name != "to ops" {
		t.Fatalf("the ask: %+v, %v; want it asked on ops as reversible by rule 1", q, err)
	}
	if why := askedReason(t, st, q); strings.Contains(why, "budget") || strings.Contains(why, "could not be evaluated") {
		t.Fatalf("the asked event says %q; want the first step's verdict, with no rule stopped", why)
	}
}

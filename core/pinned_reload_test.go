package core_test

import (
	"encoding/json"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestAPinHoldsOneConfigurationAcrossAReload: the rules a door runs
// through a pin, and the ask it makes through it, read the configuration
// in force when it was pinned, whatever a reload put in force since
// (law 13: one configuration per decision). A allows Bash and denies
// NetworkAccess, B the other way round; a door that read A's Bash verdict
// and B's NetworkAccess verdict, or chose by A and asked by B, allowed
// what each configuration alone denies.
func TestAPinHoldsOneConfigurationAcrossAReload(t *testing.T) {
	api := map[core.Surface][]string{core.SurfaceAPI: {"*"}}
	a := map[string]core.Route{core.DefaultRoute: {Deciders: api, Rules: []core.Rule{
		{Name: "shell", When: `tool == "Bash"`, Decide: core.DecideAllow},
		{Name: "no network", When: `tool == "NetworkAccess"`, Decide: core.DecideDeny},
	}}}
	b := map[string]core.Route{core.DefaultRoute: {Deciders: api, Rules: []core.Rule{
		{Name: "no shell", When: `tool == "Bash"`, Decide: core.DecideDeny},
		{Name: "network", When: `tool == "NetworkAccess"`, Decide: core.DecideAllow},
	}}}
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: a})
	ask := func(tool string) core.AskInput {
		return core.AskInput{Kind: core.KindApproval, Agent: "ag", RunID: "r1", ToolCallID: "c1", Text: "Reach example.com?",
			Reversibility: core.HardToReverse, Tool: tool, Arguments: json.RawMessage(`{"command":"curl https://example.com"}`)}
	}
	decides := func(v core.RuleVerdict, err error, want core.Decision) bool {
		return err == nil && v.Rule != nil && v.Use.Decide == want
	}

	pin := svc.Pin()
	if v, err := pin.Evaluate(ask("Bash")); !decides(v, err, core.DecideAllow) {
		t.Fatalf("Bash under A: %+v, %v; want A's allow", v.Use, err)
	}
	if err := svc.Reconfigure(core.Config{Routes: b, ActorKey: []byte(coretest.ActorKey)}); err != nil {
		t.Fatal(err)
	}
	if v, err := svc.Evaluate(ask("NetworkAccess")); !decides(v, err, core.DecideAllow) {
		t.Fatalf("NetworkAccess unpinned after the reload: %+v, %v; want B's allow", v.Use, err)
	}
	if v, err := pin.Evaluate(ask("NetworkAccess")); !decides(v, err, core.DecideDeny) {
		t.Fatalf("NetworkAccess pinned after the reload: %+v, %v; want A's deny", v.Use, err)
	}
	q, _, err := pin.AskOrRepeat(t.Context(), ask("NetworkAccess"))
	if err != nil || q.Open() || core.CloserOf(q) != core.CloserPolicy || *q.Resolution.Approved || q.Rule == nil || q.Rule.Name != "no network" {
		t.Fatalf("the pinned ask: %+v, %v; want it denied by A's rule", q, err)
	}
	pin.Close()
	if _, err := pin.Evaluate(ask("Bash")); core.ErrorCode(err) != core.CodeInternal {
		t.Fatalf("a closed pin evaluated: %v; want an internal error", err)
	}
	if _, _, err := pin.AskOrRepeat(t.Context(), ask("Bash")); core.ErrorCode(err) != core.CodeInternal {
		t.Fatalf("a closed pin asked: %v; want an internal error", err)
	}
}

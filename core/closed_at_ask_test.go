package core_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestABatchClosedAtTheAskReadsAsItsStandingApprovals: a batch whose
// every call a standing approval covered closes at the ask, and whoever
// reads who closed it reads the standing approval, applied by the bridge
// (the system surface), as for a single approval's standing close; not
// the person who granted it, on their surface. Before, a late cancel was
// told "already closed by api alice" and resolution.surface read api. A
// batch a person finished closing still reads as that person's.
func TestABatchClosedAtTheAskReadsAsItsStandingApprovals(t *testing.T) {
	ctx := t.Context()
	svc, _ := coretest.Open(t, coretest.Options{})
	alice := core.Decider{Surface: core.SurfaceAPI, ID: "alice", Name: "Alice"}
	agent := core.Decider{Surface: core.SurfaceAgent, ID: "agent-a"}
	grant, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", Text: "Lint?",
		Reversibility: core.Reversible, Tool: "lint", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	o, err := svc.Answer(ctx, core.AnswerInput{QuestionID: grant.ID, Decider: alice, OptionID: core.ApproveOption,
		Standing: &core.StandingRequest{Scope: core.StandingRun}})
	if err != nil || o.Standing == nil {
		t.Fatalf("approve and don't ask again: %+v, %v", o, err)
	}
	batch := func(tools ...string) *core.Question {
		t.Helper()
		in := core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", Text: "These?", Reversibility: core.Reversible}
		for i, tool := range tools {
			in.Calls = append(in.Calls, core.CallInput{ToolCallID: tool + "-" + string(rune('1'+i)), Tool: tool, // a batch's own calls: the same ids would be a repeat of it
				Arguments: json.RawMessage(`{"n":` + string(rune('1'+i)) + `}`)})
		}
		q, err := svc.Ask(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	lateCancel := func(q *core.Question) string {
		t.Helper()
		_, err := svc.Cancel(ctx, core.CancelInput{QuestionID: q.ID, Owner: q.Agent, By: agent})
		if core.ErrorCode(err) != core.CodeConflict {
			t.Fatalf("a late cancel: %v, want a conflict", err)
		}
		return core.ErrorMessage(err)
	}

	atAsk := batch("lint", "lint")
	if atAsk.State != core.StateAnswered {
		t.Fatalf("the covered batch is %s, want it closed at the ask", atAsk.State)
	}
	if s := core.ClosingSurface(atAsk); s != core.SurfaceSystem {
		t.Errorf("the covered batch's closing surface is %s, want %s", s, core.SurfaceSystem)
	}
	want := "already closed by standing approval " + o.Standing.ID + " (granted by api alice) at "
	if msg := lateCancel(atAsk); !strings.Contains(msg, want) {
		t.Errorf("a late cancel of the covered batch is told %q, want %q", msg, want)
	}

	// One call covered, the other decided by a person: the person closed it.
	mixed := batch("lint", "deploy")
	bob := core.Decider{Surface: core.SurfaceAPI, ID: "bob", Name: "Bob"}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: mixed.ID, Decider: bob,
		Calls: []core.CallDecision{{ToolCallID: "deploy-2", OptionID: core.DenyOption}}}); err != nil {
		t.Fatal(err)
	}
	mixed, err = svc.Get(ctx, mixed.ID)
	if err != nil || mixed.State != core.StateAnswered {
		t.Fatalf("the mixed batch: %+v, %v", mixed, err)
	}
	if s := core.ClosingSurface(mixed); s != core.SurfaceAPI {
		t.Errorf("the batch bob finished has closing surface %s, want %s", s, core.SurfaceAPI)
	}
	if msg := lateCancel(mixed); !strings.Contains(msg, "already closed by api bob at ") {
		t.Errorf("a late cancel of the batch bob finished is told %q", msg)
	}
}

// TestABatchClosedAtTheAskIsNotItsGrantersDecision: a search for what
// someone decided leaves out a batch that their standing approval closed
// at the ask, as it leaves out a single approval it closed: they did not
// look at its calls. The approval they answered to grant it is theirs.
// Before, the granter, named as the batch resolution's decider, matched.
func TestABatchClosedAtTheAskIsNotItsGrantersDecision(t *testing.T) {
	ctx := t.Context()
	svc, _ := coretest.Open(t, coretest.Options{})
	alice := core.Decider{Surface: core.SurfaceAPI, ID: "alice", Name: "Alice"}
	grant, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", Text: "Lint?",
		Reversibility: core.Reversible, Tool: "lint", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if o, err := svc.Answer(ctx, core.AnswerInput{QuestionID: grant.ID, Decider: alice, OptionID: core.ApproveOption,
		Standing: &core.StandingRequest{Scope: core.StandingRun}}); err != nil || o.Standing == nil {
		t.Fatalf("approve and don't ask again: %+v, %v", o, err)
	}
	if got, err := svc.Get(ctx, grant.ID); err != nil || !(core.ClosedQuery{Decider: "alice"}).Match(got) {
		t.Fatalf("the approval alice answered does not match her: %+v, %v", got, err)
	}
	atAsk, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", Text: "These?", Reversibility: core.Reversible,
		Calls: []core.CallInput{{ToolCallID: "c1", Tool: "lint", Arguments: json.RawMessage(`{"n":1}`)},
			{ToolCallID: "c2", Tool: "lint", Arguments: json.RawMessage(`{"n":2}`)}}})
	if err != nil || atAsk.State != core.StateAnswered {
		t.Fatalf("the covered batch: %+v, %v; want it closed at the ask", atAsk, err)
	}
	if (core.ClosedQuery{Decider: "alice"}).Match(atAsk) {
		t.Errorf("a search for what alice decided finds the batch her standing approval closed at the ask")
	}
}

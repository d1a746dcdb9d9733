package core_test

import (
	"encoding/json"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestAnAlteredApprovalButtonDoesNotFit: a single call's card has
// approve, deny, edit and standing-approval buttons, none naming an item
// and only the standing one an option (its scope); a ref that names
// either is no button of the card, altered or made up, and is refused
// on every surface that reads buttons. Before, any item and option were
// read as the action alone, so an altered Approve approved.
func TestAnAlteredApprovalButtonDoesNotFit(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", Text: "Run?",
		Tool: "bash", Arguments: json.RawMessage(`{"cmd":"ls"}`), Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	d := core.Decider{Surface: core.SurfaceAPI, ID: "ops", Name: "ops"}
	ref := func(a core.RefAction, item, option int) core.Ref {
		return core.Ref{QuestionID: q.ID, Action: a, Item: item, Option: option}
	}
	for _, r := range []core.Ref{ref(core.RefApprove, 5, 0), ref(core.RefApprove, -1, 3), ref(core.RefDeny, 0, 0),
		ref(core.RefDeny, -1, 1), ref(core.RefEdit, -1, 2), ref(core.RefStanding, 1, 0), ref(core.RefStanding, -1, 2)} {
		if _, err := core.AnswerFor(q, r, d, `{"cmd":"ls"}`); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("%c item %d option %d: %v; want it refused as not fitting", r.Action, r.Item, r.Option, err)
		}
	}
	for _, r := range []core.Ref{ref(core.RefApprove, -1, 0), ref(core.RefDeny, -1, 0), ref(core.RefStanding, -1, 1)} {
		if _, err := core.AnswerFor(q, r, d, ""); err != nil {
			t.Errorf("%c item %d option %d, a button of the card: %v", r.Action, r.Item, r.Option, err)
		}
	}
}

package core_test

import (
	"encoding/json"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// TestBatchRefs: a batch card's buttons stand for the answers they say,
// per call and for every call; a ref that does not fit is refused.
func TestBatchRefs(t *testing.T) {
	q := &core.Question{ID: core.NewID(0), Kind: core.KindApproval, State: core.StateOpen, Reversibility: core.Reversible,
		Calls: []core.BatchCall{
			{ToolCallID: "c1", ToolCall: core.ToolCall{Tool: "w", Arguments: json.RawMessage(`{}`), Standing: &core.StandingOffer{}}},
			{ToolCallID: "c2", ToolCall: core.ToolCall{Tool: "w", Arguments: json.RawMessage(`{"p":1}`), Editable: &core.Editable{All: true}}},
		}}
	d := core.Decider{Surface: core.SurfaceSlack, ID: "U1"}
	ref := func(a core.RefAction, item, option int) core.Ref {
		return core.Ref{QuestionID: q.ID, Action: a, Item: item, Option: option}
	}
	for _, tt := range []struct {
		name string
		r    core.Ref
		text string
		want core.AnswerInput
	}{
		{"approve one", ref(core.RefApprove, 0, 0), "", core.AnswerInput{Calls: []core.CallDecision{{ToolCallID: "c1", OptionID: core.ApproveOption}}}},
		{"deny one with a reason", ref(core.RefDeny, 1, 0), "no", core.AnswerInput{Calls: []core.CallDecision{{ToolCallID: "c2", OptionID: core.DenyOption, Reason: "no"}}}},
		{"edit one", ref(core.RefEdit, 1, 0), ` {"p":2} `, core.AnswerInput{Calls: []core.CallDecision{{ToolCallID: "c2", OptionID: core.ApproveOption, Arguments: json.RawMessage(`{"p":2}`)}}}},
		{"standing for one", ref(core.RefStanding, 0, 0), "", core.AnswerInput{Calls: []core.CallDecision{{ToolCallID: "c1", OptionID: core.ApproveOption,
			Standing: &core.StandingRequest{Scope: core.StandingRun}}}}},
		{"approve all", ref(core.RefApprove, -1, 0), "", core.AnswerInput{OptionID: core.ApproveOption}},
		{"deny all", ref(core.RefDeny, -1, 0), "later", core.AnswerInput{OptionID: core.DenyOption, Text: "later"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := core.AnswerFor(q, tt.r, d, tt.text)
			if err != nil {
				t.Fatal(err)
			}
			tt.want.QuestionID, tt.want.Decider = q.ID, d
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(tt.want)
			if string(g) != string(w) {
				t.Fatalf("got %s\nwant %s", g, w)
			}
		})
	}
	for name, r := range map[string]core.Ref{
		"a call that does not exist": ref(core.RefApprove, 2, 0),
		"edit all":                   ref(core.RefEdit, -1, 0),
		"an option button":           ref(core.RefOption, -1, 0),
	} {
		if _, err := core.AnswerFor(q, r, d, "{}"); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
	if _, err := core.AnswerFor(q, ref(core.RefEdit, 1, 0), d, "  "); core.ErrorCode(err) != core.CodeInvalid {
		t.Errorf("an empty edit: %v, want invalid", err)
	}
}

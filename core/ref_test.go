package core_test

import (
	"encoding/json"
	"testing"

	"github.com/askbridge/askbridge/core"
)

func TestRefRoundTrip(t *testing.T) {
	id := core.NewID(3)
	for _, r := range []core.Ref{
		{QuestionID: id, Item: -1, Action: core.RefOption, Option: 9},
		{QuestionID: id, Item: 3, Action: core.RefOption, Option: 3},
		{QuestionID: id, Item: -1, Action: core.RefApprove},
		{QuestionID: id, Item: -1, Action: core.RefDeny},
		{QuestionID: id, Item: 0, Action: core.RefText},
		{QuestionID: id, Item: -1, Action: core.RefDecline},
	} {
		s := r.Encode()
		if len(s) != core.RefLen || len(s) > 64 {
			t.Fatalf("%+v encodes to %q", r, s)
		}
		got, err := core.DecodeRef(s)
		if err != nil || got != r {
			t.Fatalf("decode %q = %+v, %v; want %+v", s, got, err, r)
		}
	}
	for _, bad := range []core.Ref{
		{QuestionID: "nope", Item: -1, Action: core.RefOption},
		{QuestionID: id, Item: -2, Action: core.RefOption},
		{QuestionID: id, Item: -1, Action: 'z'},
		{QuestionID: id, Item: -1, Action: core.RefOption, Option: 99},
	} {
		if s := bad.Encode(); s != "" {
			t.Fatalf("%+v encoded to %q", bad, s)
		}
	}
}

func TestAnswerForChecksTheQuestion(t *testing.T) {
	q := &core.Question{ID: core.NewID(0), Kind: core.KindDecision, Options: []core.Option{{ID: "a"}, {ID: "b"}}}
	d := core.Decider{Surface: core.SurfaceSlack, ID: "U1"}
	in, err := core.AnswerFor(q, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: 1}, d, "")
	if err != nil || in.OptionID != "b" {
		t.Fatalf("%+v %v", in, err)
	}
	for _, r := range []core.Ref{
		{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: 2},
		{QuestionID: q.ID, Item: -1, Action: core.RefApprove},
		{QuestionID: q.ID, Item: 0, Action: core.RefOption},
		{QuestionID: core.NewID(0), Item: -1, Action: core.RefOption},
	} {
		if _, err := core.AnswerFor(q, r, d, ""); core.ErrorCode(err) != core.CodeInvalid {
			t.Fatalf("ref %+v: %v, want invalid", r, err)
		}
	}
}

// TestAnAlteredApprovalButtonDoesNotFit: a single call's card has
// approve, deny, edit and standing-approval buttons, none naming an item
// and only the standing one an option (its scope); a ref that names
// either is no button of the card, altered or made up, and is refused
// on every surface that reads buttons. Before, any item and option were
// read as the action alone, so an altered Approve approved.
func TestAnAlteredApprovalButtonDoesNotFit(t *testing.T) {
	q := &core.Question{ID: core.NewID(0), Kind: core.KindApproval,
		Call: &core.ToolCall{Tool: "bash", Arguments: json.RawMessage(`{"cmd":"ls"}`)}}
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

// FuzzDecodeRef: any string either is refused or decodes to a ref that
// encodes back to exactly that string.
func FuzzDecodeRef(f *testing.F) {
	f.Add(core.Ref{QuestionID: core.NewID(1), Item: 2, Action: core.RefOption, Option: 1}.Encode())
	f.Add("1o-0aaaaaaaaaaaaaaaaa")
	f.Add("")
	f.Add("2o-0aaaaaaaaaaaaaaaaa")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := core.DecodeRef(s)
		if err != nil {
			return
		}
		if r.Encode() != s {
			t.Fatalf("%q decoded to %+v which encodes to %q", s, r, r.Encode())
		}
	})
}

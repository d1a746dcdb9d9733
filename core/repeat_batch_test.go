package core_test

import (
	"encoding/json"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestARepeatBatchIsTheSameAskWhateverItsKeysOrder: a batch sent again
// with its calls' arguments in another key order (a client that rebuilds
// its JSON from a map on each retry) is the same ask and gets the same
// question, as a single call's approval already did; before, it was
// refused as "a different body", and the agent could not get its question
// back.
func TestARepeatBatchIsTheSameAskWhateverItsKeysOrder(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	in := batchAsk()
	in.IdempotencyKey = "batch-1"
	in.Calls[0].Arguments = json.RawMessage(`{"path":"/a","mode":"0644"}`)
	first, err := svc.Ask(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	again := batchAsk()
	again.RunID, again.IdempotencyKey = in.RunID, "batch-1"
	again.Calls[0].Arguments = json.RawMessage(`{ "mode": "0644", "path": "/a" }`)
	q, repeat, err := svc.AskOrRepeat(t.Context(), again)
	if err != nil || !repeat || q.ID != first.ID {
		t.Fatalf("the batch sent again with its keys reordered: %+v, repeat %v, %v; want question %s", q, repeat, err, first.ID)
	}
	// A call's arguments that differ in value are another ask.
	again.Calls[0].Arguments = json.RawMessage(`{"mode":"0600","path":"/a"}`)
	if _, _, err := svc.AskOrRepeat(t.Context(), again); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("a batch with other arguments under the same key: %v, want a conflict", err)
	}
}

// TestARepeatIsTheSameAskWhateverTheOrderOfItsCallsAndEditableKeys: a
// batch sent again with its calls in another order, or an approval with
// its editable keys in another order (a client that builds them from a
// map), is the same ask and gets its question back, closed or not.
// Before, it was refused as "a different body" with the advice to use a
// new tool_call_id, which would have parked the same calls a second
// time.
func TestARepeatIsTheSameAskWhateverTheOrderOfItsCallsAndEditableKeys(t *testing.T) {
	ctx := t.Context()
	svc, _ := coretest.Open(t, coretest.Options{})
	in := batchAsk()
	in.Calls[0].Editable = &core.Editable{Keys: []string{"path", "mode"}}
	in.Calls[0].Arguments = json.RawMessage(`{"path":"/a","mode":"0644"}`)
	first, err := svc.Ask(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	again := in
	again.Calls = []core.CallInput{in.Calls[1], in.Calls[0]}
	again.Calls[1].Editable = &core.Editable{Keys: []string{"mode", "path"}}
	if q, repeat, err := svc.AskOrRepeat(ctx, again); err != nil || !repeat || q.ID != first.ID {
		t.Fatalf("the batch sent again, its calls in another order: %+v, repeat %v, %v; want question %s", q, repeat, err, first.ID)
	}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: first.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"},
		OptionID: core.ApproveOption}); err != nil {
		t.Fatal(err)
	}
	if q, repeat, err := svc.AskOrRepeat(ctx, again); err != nil || !repeat || q.ID != first.ID || q.State != core.StateAnswered {
		t.Fatalf("sent again after it closed: %+v, repeat %v, %v; want question %s, answered", q, repeat, err, first.ID)
	}

	one := core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "r-edit", ToolCallID: "t1", Text: "Move it?",
		Reversibility: core.Reversible, Tool: "mv", Arguments: json.RawMessage(`{"from":"a","to":"b"}`),
		Editable: &core.Editable{Keys: []string{"from", "to"}}}
	q1, err := svc.Ask(ctx, one)
	if err != nil {
		t.Fatal(err)
	}
	one.Editable = &core.Editable{Keys: []string{"to", "from"}}
	if q, repeat, err := svc.AskOrRepeat(ctx, one); err != nil || !repeat || q.ID != q1.ID {
		t.Fatalf("an approval sent again, its editable keys in another order: repeat %v, %v", repeat, err)
	}
	// Other editable keys are another ask.
	one.Editable = &core.Editable{Keys: []string{"to"}}
	if _, _, err := svc.AskOrRepeat(ctx, one); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("an approval sent again with other editable keys: %v, want a conflict", err)
	}
}

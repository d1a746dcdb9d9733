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

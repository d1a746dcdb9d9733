package core

import (
	"encoding/json"
	"testing"
)

// TestARepeatOfABatchStoredBeforeItsOrderStoppedCountingMatches: a
// question stored while a batch's fingerprint was of its calls in the
// order sent keeps that fingerprint; the same ask sent again in the same
// order still gets it back, now that the fingerprint sorts the calls.
func TestARepeatOfABatchStoredBeforeItsOrderStoppedCountingMatches(t *testing.T) {
	in := AskInput{Kind: KindApproval, Agent: "a", RunID: "r", Text: "Write?", Reversibility: Reversible, Calls: []CallInput{
		{ToolCallID: "z", Tool: "write", Arguments: json.RawMessage(`{"p":1}`)},
		{ToolCallID: "a", Tool: "write", Arguments: json.RawMessage(`{"p":2}`)},
	}}
	idem, sent, err := idempotencyOf(in)
	if err != nil {
		t.Fatal(err)
	}
	if sent == idem.Fingerprint {
		t.Fatal("calls out of order fingerprint as sent")
	}
	stored := &Question{ID: "q1", Idempotency: &Idempotency{Key: idem.Key, Fingerprint: sent}}
	if q, err := repeatOf(in, idem, sent, &DuplicateError{Question: stored}); err != nil || q != stored {
		t.Errorf("the repeat of a question fingerprinted as sent: %v, %v", q, err)
	}
}

package httpapi_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAnIdempotencyKeyGivenTwiceIsRefused: an ask whose Idempotency-Key
// header comes twice is refused by name and parks nothing; before, the
// first value was taken without a word, so a retry sent with the values
// in another order parked the question again.
func TestAnIdempotencyKeyGivenTwiceIsRefused(t *testing.T) {
	e := newEnv(t)
	before := snapshot(t, e.store)
	body := `{"kind":"clarification","question":"Ship it?","reversibility":"reversible","run_id":"r1"}`
	r := e.do("POST", "/v1/questions", &agentA, body, "Idempotency-Key", "deploy-42", "Idempotency-Key", "deploy-43")
	if r.status != 400 || !strings.Contains(errorOf(t, r).Message, "Idempotency-Key header is given 2 times") {
		t.Fatalf("%d %s; want a 400 naming the header", r.status, r.body)
	}
	if d := cmp.Diff(before, snapshot(t, e.store)); d != "" {
		t.Errorf("the refused ask changed the store:\n%s", d)
	}
}

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

// TestAnEmptyIdempotencyKeyIsRefused: an ask whose Idempotency-Key
// header is sent empty (a shell variable left unset, say) is refused by
// name and parks nothing; before, it was read as no key, and each retry
// of the ask parked another question for people to answer.
func TestAnEmptyIdempotencyKeyIsRefused(t *testing.T) {
	e := newEnv(t)
	before := snapshot(t, e.store)
	body := `{"kind":"clarification","question":"Ship it?","reversibility":"reversible","run_id":"r1"}`
	for _, key := range []string{"", "   "} {
		r := e.do("POST", "/v1/questions", &agentA, body, "Idempotency-Key", key)
		if r.status != 400 || !strings.Contains(errorOf(t, r).Message, "Idempotency-Key header is empty") {
			t.Errorf("key %q: %d %s; want a 400 naming the header", key, r.status, r.body)
		}
	}
	if d := cmp.Diff(before, snapshot(t, e.store)); d != "" {
		t.Errorf("the refused asks changed the store:\n%s", d)
	}
}

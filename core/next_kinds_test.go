package core

import "testing"

// Every kind has its home in nextRules: one added to enums.go without a
// rule would have every transition refused instead of applied unchecked.
func TestEveryKindHasANextRule(t *testing.T) {
	for _, k := range kinds {
		if nextRules[k] == nil {
			t.Errorf("kind %q has no transition rule", k)
		}
	}
	if len(nextRules) != len(kinds) {
		t.Errorf("%d transition rules for %d kinds", len(nextRules), len(kinds))
	}
	q := seed("riddle")
	_, err := Next(q, Transition{QuestionID: q.ID, Now: nextNow, Resolution: &Resolution{State: StateAnswered}})
	if ErrorCode(err) != CodeInvalid {
		t.Fatalf("a kind with no rule: %v, want invalid", err)
	}
}

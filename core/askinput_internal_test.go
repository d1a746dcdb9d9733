package core

import "testing"

// Every kind has its home in askChecks: one added to enums.go without a
// check would be refused at every ask instead of asked unchecked.
func TestEveryKindHasAnAskCheck(t *testing.T) {
	for _, k := range kinds {
		if askChecks[k] == nil {
			t.Errorf("kind %q has no ask check", k)
		}
	}
	if len(askChecks) != len(kinds) {
		t.Errorf("%d ask checks for %d kinds", len(askChecks), len(kinds))
	}
}

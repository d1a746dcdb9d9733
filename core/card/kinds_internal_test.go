package card

import (
	"testing"

	"github.com/askbridge/askbridge/core"
)

// Every kind of core's has its card: a sixth kind fails here until its
// sections, its outcome's label and its words are written.
func TestEveryKindHasACard(t *testing.T) {
	for _, sh := range core.Shapes() {
		k, ok := kindCards[sh]
		if !ok {
			t.Errorf("kind %q has no card", sh)
			continue
		}
		if k.body == nil || k.label == "" {
			t.Errorf("kind %q's card lacks its sections or its outcome's label: %+v", sh, k)
		}
		if k.parts != nil && (k.note == nil || k.parts.noun == "" || k.parts.each == "" || k.parts.escalated == "") {
			t.Errorf("kind %q is answered in parts but lacks their words: %+v", sh, k)
		}
	}
	if len(kindCards) != len(core.Shapes()) {
		t.Errorf("%d cards for %d kinds", len(kindCards), len(core.Shapes()))
	}
}

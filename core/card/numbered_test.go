package card_test

import (
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestDecisionButtonsAreNumbered: each option's button starts with the
// number its option has on the card, as a form's buttons do, so two
// options whose titles differ only after where a platform cuts a label
// still get buttons that can be told apart. The recommended note stays
// what a cut keeps.
func TestDecisionButtonsAreNumbered(t *testing.T) {
	q := cardQ(core.KindDecision)
	long := "Roll back payments-api and billing-worker to v2.3.1, "
	q.Options = []core.Option{{ID: "keep", Title: long + "keeping the new schema", Recommended: true}, {ID: "drop", Title: long + "dropping the new column"}}
	c := card.New(q, core.MessageRef{Kind: core.DeliverPost})
	var got []card.Action
	for _, s := range c.Sections {
		if s.Kind == card.SectionOption {
			got = append(got, s.Actions...)
		}
	}
	want := []string{"1. " + long + "keeping the new schema" + card.RecommendedNote, "2. " + long + "dropping the new column"}
	if len(got) != len(want) {
		t.Fatalf("option buttons %q", labels(got))
	}
	for i, a := range got {
		if a.Label != want[i] {
			t.Errorf("button %d reads %q, want %q", i+1, a.Label, want[i])
		}
	}
	if got[0].Keep != card.RecommendedNote || got[1].Keep != "" {
		t.Errorf("what a cut keeps: %q, %q", got[0].Keep, got[1].Keep)
	}
}

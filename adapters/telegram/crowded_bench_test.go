package telegram

import "testing"

// BenchmarkCrowdedCard renders crowded batch cards (crowdedBatches: 20
// calls with arguments too long for any card) as their first post: what
// each post and edit of such a card costs its renderer, with the plan
// that gives every call with buttons its named cut.
func BenchmarkCrowdedCard(b *testing.B) {
	for _, name := range []string{"paragraphs", "partly decided", "longest tools"} {
		c := cardOf(crowdedBatches()[name])
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := RenderCard(c, -1001); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

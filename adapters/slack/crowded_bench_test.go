package slack

import "testing"

// BenchmarkCrowdedCard renders crowded batch cards (crowdedBatches: 20
// calls with arguments too long for any card) as their first post: what
// each post and edit of such a card costs its renderer, with the plan
// that keeps every call it shows at its named cut.
func BenchmarkCrowdedCard(b *testing.B) {
	for _, name := range []string{"paragraphs", "partly decided", "longest tools"} {
		q := crowdedBatches()[name]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				cardFor(q, false)
			}
		})
	}
}

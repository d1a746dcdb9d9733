package discord

import (
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// BenchmarkCrowdedCard renders crowded batch cards (crowdedBatches: 20
// calls with arguments too long for any card) as their first post: what
// each post and edit of such a card costs its renderer, with the plan
// that keeps every call it shows at its named cut.
func BenchmarkCrowdedCard(b *testing.B) {
	for _, name := range []string{"paragraphs", "partly decided", "longest tools"} {
		c := card.New(crowdedBatches()[name], core.MessageRef{Kind: core.DeliverPost})
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				RenderPost(c)
			}
		})
	}
}

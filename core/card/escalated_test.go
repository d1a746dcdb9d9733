package card_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestAnEscalatedCardSaysWhatWasRecorded: a question escalates at its
// deadline whatever was recorded by then, so a card in the escalation
// room says "nobody answered in time" only where nobody had: a quorum
// with a vote in, a form with an item answered and a batch with a call
// decided each say what was missing instead. Before, all three said
// nobody answered, beside a tally or progress naming who had.
func TestAnEscalatedCardSaysWhatWasRecorded(t *testing.T) {
	vote := func(q *core.Question) {
		q.Quorum = 2
		q.Votes = []core.Vote{{Key: "person:alice", Choice: core.ApproveOption, Decider: outAlice, At: cardT0}}
	}
	part := func(id, option string) func(q *core.Question) {
		return func(q *core.Question) { q.Answers = []core.ItemAnswer{outPart(id, option, outAlice)} }
	}
	batch := func() *core.Question { return outBatch() }
	for _, c := range []struct {
		name string
		q    func() *core.Question
		set  func(q *core.Question)
		want string
	}{
		{"decision, nothing in", func() *core.Question { return cardQ(core.KindDecision) }, func(*core.Question) {}, card.EscalatedMarker},
		{"approval, one vote of two", func() *core.Question { return cardQ(core.KindApproval) }, vote, "Escalated: not enough people agreed in time"},
		{"form, one item of two", func() *core.Question { return cardQ(core.KindForm) }, part("i1", "fri"), "Escalated: only partly answered in time"},
		{"batch, one call of three", batch, part("toolu_1", core.ApproveOption), "Escalated: only partly decided in time"},
	} {
		q := c.q()
		c.set(q)
		var said []string
		for _, m := range card.New(q, core.MessageRef{Surface: core.SurfaceSlack, Room: "C9", ID: "1", Kind: core.DeliverEscalate}).Markers {
			if strings.HasPrefix(m.Text(), "Escalated") {
				said = append(said, m.Text())
			}
		}
		if !slices.Equal(said, []string{c.want}) {
			t.Errorf("%s: the escalated card says %q, want %q", c.name, said, c.want)
		}
		// The card posted to the route's own rooms has no escalation marker.
		if post := card.New(q, core.MessageRef{Kind: core.DeliverPost}).Markers; slices.ContainsFunc(post, func(m card.Marker) bool {
			return strings.HasPrefix(m.Text(), "Escalated")
		}) {
			t.Errorf("%s: a card posted to the route's rooms has markers %v", c.name, post)
		}
	}
}

package card_test

import (
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestOnlyKeepsWhatItIsToldAndLeavesTheCard: Only drops the actions
// keep refuses, from the sections and the card's own, and the card it
// was called on still has them all: a door builds one card and keeps a
// copy per recipient from it.
func TestOnlyKeepsWhatItIsToldAndLeavesTheCard(t *testing.T) {
	c := card.New(outBatch(), core.MessageRef{Kind: core.DeliverPost})
	count := func(c card.Card, action core.RefAction) (n int) {
		for _, s := range c.Sections {
			for _, a := range s.Actions {
				if a.Ref.Action == action {
					n++
				}
			}
		}
		for _, a := range c.Actions {
			if a.Ref.Action == action {
				n++
			}
		}
		return n
	}
	approves, declines := count(c, core.RefApprove), count(c, core.RefDecline)
	if approves < 2 || declines != 1 {
		t.Fatalf("the batch's card has %d approves and %d declines", approves, declines)
	}
	kept := c.Only(func(a card.Action) bool { return a.Ref.Action != core.RefApprove && a.Ref.Action != core.RefDecline })
	if n, m := count(kept, core.RefApprove), count(kept, core.RefDecline); n != 0 || m != 0 {
		t.Errorf("Only kept %d approves and %d declines", n, m)
	}
	if count(kept, core.RefDeny) != count(c, core.RefDeny) || count(kept, core.RefDeny) == 0 {
		t.Errorf("Only dropped denies it was told to keep")
	}
	if n, m := count(c, core.RefApprove), count(c, core.RefDecline); n != approves || m != declines {
		t.Errorf("the card Only was called on has %d approves and %d declines left, had %d and %d", n, m, approves, declines)
	}
}

// Package formreply picks the form item that a free-text reply in a
// card's thread answers, alike for every chat adapter whose threads take
// one (Slack, Teams).
package formreply

import (
	"time"

	"github.com/askbridge/askbridge/core"
)

// Item is the index of the item of form q that a reply by d, written at
// at (the platform's time of it; zero: unknown, so now), answers: the
// first that had no answer when it was written, or 0 when all had one
// (core then says the form is closed). If someone answered that item
// since, core refuses the reply and its writer is told, rather than it
// answering an item it was not written for.
//
// at is the platform's clock, and an answer's time askbridge's, which
// may run ahead of it: an answer the replier gave themself came before
// they wrote, whatever the two clocks say, so it counts as earlier.
// askbridge keeps its times to the millisecond, so someone else's answer
// stamped in the reply's own millisecond may have come after the reply,
// and counts as if it did: the reply is refused rather than moved.
func Item(q *core.Question, d core.Decider, at time.Time) int {
	for i, it := range q.Items {
		a, ok := q.Answered(it.ID)
		if !ok {
			return i
		}
		own := a.Decider.Surface == d.Surface && a.Decider.ID == d.ID
		if !at.IsZero() && !own && !a.At.Before(at.Truncate(time.Millisecond)) {
			return i
		}
	}
	return 0
}

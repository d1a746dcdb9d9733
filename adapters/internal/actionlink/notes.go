package actionlink

import (
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// notOffered is what a link whose action q's card no longer offers is
// told: who answered its part and when, where an answer to the part took
// it off the card, as a chat click on a card drawn before is told
// (card.PartDoneNote), so the person who answered it learns it counted;
// else that the choice is gone.
func notOffered(q *core.Question, r core.Ref) string {
	if note, done := card.PartDoneNote(q, r); done {
		return note
	}
	return "This choice is no longer offered on the question. Nothing was recorded."
}

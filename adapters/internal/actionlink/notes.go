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

// closedByRecipient is what a POST that found q closed is told when the
// link's own recipient d closed it: a double tap (whose second response
// is the page a browser shows) or a second link of theirs. Their answer
// stands, and "your answer was not recorded" (card.RefusalNote) would
// have them believe it lost. ok is false when anyone else closed q.
func closedByRecipient(q *core.Question, d core.Decider) (note string, ok bool) {
	by, ok := card.ClosingPerson(q)
	if !ok || by.Surface != d.Surface || by.ID != d.ID {
		return "", false
	}
	return "Already closed by an earlier answer from this link's recipient: " + card.OutcomeLine(q) +
		". That answer stands; nothing more was recorded.", true
}

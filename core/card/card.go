package card

import (
	"github.com/askbridge/askbridge/core"
)

// The helpers below are the platform-neutral wording of a card, so Slack,
// Discord and Telegram say the same things in their own markup. They hold
// human text (names, answers) that chat platforms show to people; it is
// never sent to a model, which gets the fenced resume instead.

// KindTitle is a card's heading word for q's kind.
func KindTitle(k core.Kind) string {
	switch k {
	case core.KindDecision:
		return "Decision needed"
	case core.KindApproval:
		return "Approval needed"
	case core.KindForm:
		return "Questions"
	}
	return "Question"
}

// HardToReverseMarker is the plain marker shown on hard-to-reverse cards.
const HardToReverseMarker = "HARD TO REVERSE"

// UnclassifiedMarker is shown on a card whose stored record predates
// reversibility: nobody said, and nobody guesses.
const UnclassifiedMarker = "REVERSIBILITY NOT STATED"

// EscalatedMarker is shown on a card posted to an escalation route, of a
// question nobody had answered any of. One that held votes or answered
// parts says what was missing instead: a question escalates at its
// deadline whatever it holds, and "nobody answered" beside a tally or
// progress naming who had would be false (law 12).
const (
	EscalatedMarker      = "Escalated: nobody answered in time"
	EscalatedVotesMarker = "Escalated: not enough people agreed in time"
	EscalatedItemsMarker = "Escalated: only partly answered in time"
	EscalatedCallsMarker = "Escalated: only partly decided in time"
)

// RepeatMarker is shown on a card posted again after an attempt that may
// have left an unrecorded copy in the room (law 4).
const RepeatMarker = "Posted again: an earlier copy of this card may be above"

// Headings every surface starts the matching post with, so people (and the
// shared scenarios) recognise them wherever they read.
const (
	ReminderHeading = "Still waiting for an answer"
	DigestHeading   = "While you were away"
)

// ChoiceLabel is what was chosen, for people: the option's title, the
// approval verdict, or the form's answers, one per line.
func ChoiceLabel(q *core.Question) string {
	r := q.Resolution
	if r == nil {
		return ""
	}
	if k := kindCardOf(q); k.choice != nil {
		return k.choice(q)
	}
	return r.Answer
}

package slack

import (
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TooLongToEdit replaces "Edit and approve" on a call whose arguments
// the edit modal cannot hold whole (editFits).
var TooLongToEdit = card.TooLongToEdit("Slack")

// editFits reports whether a can be drawn and opened as Slack shows it:
// anything but an "Edit and approve" can, and that one only if its
// modal's input starts from the arguments whole, counted as Slack counts
// (characters, not bytes). Started empty, whatever is typed would
// replace the whole object, or with some keys editable no edit could
// succeed.
func editFits(a card.Action) bool {
	return a.Input != card.InputArguments || textLen(a.Prefill) <= maxInputLength
}

// tooLongToEdit reports whether s has an "Edit and approve" that is not
// drawn because its arguments do not fit (editFits).
func tooLongToEdit(s card.Section) bool {
	for _, a := range s.Actions {
		if !editFits(a) {
			return true
		}
	}
	return false
}

// editActionOf finds the card's "Edit and approve" that carries r, and
// the tool of its call.
func editActionOf(c card.Card, r core.Ref) (card.Action, string, bool) {
	for _, s := range c.Sections {
		for _, a := range s.Actions {
			if a.Ref == r && a.Input == card.InputArguments {
				return a, s.Title, true
			}
		}
	}
	return card.Action{}, "", false
}

// noEdit is the note for a click on "Edit and approve" when no modal
// opens for it on the question as it stands (a card drawn before the
// question changed): its call was decided meanwhile, or its arguments
// are too long to edit here, or else the button does not fit the
// question.
func noEdit(q *core.Question, c card.Card, r core.Ref) string {
	tooLong := ""
	if a, _, found := editActionOf(c, r); found && !editFits(a) {
		tooLong = TooLongToEdit
	}
	return card.NoFormNote(q, r, tooLong)
}

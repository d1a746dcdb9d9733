package discord

import (
	"slices"
	"strconv"
	"strings"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TooLongToEdit replaces "Edit and approve" on a call whose arguments
// the edit modal cannot hold whole (editFits).
var TooLongToEdit = card.TooLongToEdit("Discord")

// maxArgumentsInput is the most the edit modal's text input holds.
const maxArgumentsInput = min(core.MaxArgumentsLen, maxInputLength)

// editFits reports whether a can be drawn and opened as Discord shows
// it: anything but an "Edit and approve" can, and that one only if its
// modal starts from the arguments whole. Started empty (or cut, no
// longer JSON), whatever is typed would replace the whole object, or
// with some keys editable no edit could succeed.
func editFits(a card.Action) bool {
	return a.Input != card.InputArguments || width(a.Prefill) <= maxArgumentsInput
}

// tooLongLine is the card's line saying which calls' arguments are to be
// edited elsewhere, their "Edit and approve" left out; "" if none. A
// batch names its calls in one line, so a score of them does not crowd
// out the card. The calls off (section indexes), left off the card, are
// not named: the card sends them elsewhere whole (unseenNote).
func tooLongLine(c card.Card, off []int) string {
	var calls []string
	for i, s := range c.Sections {
		if slices.Contains(off, i) {
			continue
		}
		for _, a := range s.Actions {
			if !editFits(a) {
				calls = append(calls, strconv.Itoa(s.Index+1))
				break
			}
		}
	}
	switch {
	case len(calls) == 0:
		return ""
	case c.Progress == nil:
		return "\n*" + TooLongToEdit + "*"
	}
	which := "call " + calls[0]
	if n := len(calls); n > 1 {
		which = "calls " + strings.Join(calls[:n-1], ", ") + " and " + calls[n-1]
	}
	return "\n\n*The arguments of " + which + " are too long to edit in Discord: edit and approve them in the console or through the API.*"
}

// noModal is the note for a click on a button that collects text when
// no modal opens for it on the question as it stands (a card drawn
// before the question changed): the part it is for was answered
// meanwhile, or the arguments are too long to edit here, or else the
// button does not fit the question.
func noModal(q *core.Question, c card.Card, r core.Ref) string {
	tooLong := ""
	if a, _, found := actionOf(c, r); found && !editFits(a) {
		tooLong = TooLongToEdit
	}
	return card.NoFormNote(q, r, tooLong)
}

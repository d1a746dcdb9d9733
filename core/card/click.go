package card

import "github.com/askbridge/askbridge/core"

// ClickCounts decides, for a surface that takes a click's data from the
// clicker's app (Telegram's callback_data, Discord's custom_id), whether
// a click whose data decoded to r may act on q, and if not, what the
// clicker is told. A modified app can send any data, but the message it
// came from is the platform's, as the platform holds it: carried is
// whether that message shows the button, ofCard whether it is one of q's
// cards. A button the message does not show (an option or item q lacks,
// an altered form of a real one, another question's, the "Approve all" a
// crowded card leaves off) is refused whatever core would make of it
// (law 5). On one of q's own cards, a click an edit raced is told the
// truth: how q ended once it is closed (core says so, so the click goes
// on), or who answered the part it was for.
func ClickCounts(q *core.Question, r core.Ref, carried, ofCard bool) (note string, ok bool) {
	switch {
	case carried:
		return "", true
	case !ofCard:
		return NotOnCardNote, false
	case !q.Open():
		return "", true
	}
	if note, done := PartDoneNote(q, r); done {
		return note, false
	}
	return NotOnCardNote, false
}

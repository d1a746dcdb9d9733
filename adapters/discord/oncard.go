package discord

import (
	"github.com/bwmarrin/discordgo"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// onCard decides whether in, an interaction whose custom_id decoded to a
// ref of q, may act on q, and if not, what the clicker is told. The
// custom_id is the whole act (law 5), so it must be a button of the
// message it came from. Discord's documentation promises no such check
// (its API has been seen refusing a component it cannot find on the
// message, but that is no contract), while the message in the payload is
// Discord's, as Discord holds it. A custom_id the message does not carry
// (an option or item q lacks, an altered form of a real button, another
// question's button, the "Approve all" a crowded card leaves off) is
// refused whatever core would make of it. A modal's custom_id is its
// button's (RenderModal), so a submit is held to the same. On one of q's
// own cards, a click that an edit raced is told the truth: how q ended
// once it is closed (core says so), or who answered the part it was for.
func onCard(q *core.Question, in inbound) (string, bool) {
	_, recorded := cardRef(q, in.MessageID)
	switch {
	case in.Carried:
		return "", true
	case !in.OnMessage || !recorded:
		return card.NotOnCardNote, false
	case !q.Open():
		return "", true
	}
	if note, done := card.PartDoneNote(q, in.Ref); done {
		return note, false
	}
	return card.NotOnCardNote, false
}

// cardRef finds the Discord message id among q's cards: its record, and
// whether it is one.
func cardRef(q *core.Question, id string) (core.MessageRef, bool) {
	for _, m := range q.Messages {
		if m.Surface == core.SurfaceDiscord && m.ID == id {
			return m, true
		}
	}
	return core.MessageRef{}, false
}

// carries reports whether m has a button whose custom_id is id.
func carries(m *discordgo.Message, id string) bool {
	if m == nil || id == "" {
		return false
	}
	for c := range inRows(m.Components) {
		if b := component[discordgo.Button](c); b != nil && b.CustomID == id {
			return true
		}
	}
	return false
}

package discord

import (
	"github.com/bwmarrin/discordgo"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// onCard decides whether in, an interaction whose custom_id decoded to a
// ref of q, may act on q (card.ClickCounts), and if not, what the
// clicker is told. Discord's documentation promises no check that a
// custom_id is one of the message's (its API has been seen refusing one
// it cannot find, but that is no contract); the message in the payload
// is Discord's. A modal's custom_id is its button's (RenderModal), so a
// submit is held to the same.
func onCard(q *core.Question, in inbound) (string, bool) {
	_, recorded := cardRef(q, in.MessageID)
	return card.ClickCounts(q, in.Ref, in.Carried, in.OnMessage && recorded)
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

package discord

import (
	"github.com/bwmarrin/discordgo"

	"github.com/askbridge/askbridge/core/card"
)

// batchComponents are a batch card's buttons. The card's own (approve
// all, deny all, decline) come first, so they always fit; the calls'
// numbered buttons share the rows left, five a row. A batch with more
// undecided calls than four rows hold shows the first ones' buttons; the
// rest are decided with "Approve all" or "Deny all", on another surface,
// or once the first are decided and the card is edited.
func batchComponents(c card.Card) []discordgo.MessageComponent {
	rows := []discordgo.MessageComponent{}
	add := func(bs []discordgo.MessageComponent) {
		for len(bs) > 0 && len(rows) < maxRows {
			n := min(len(bs), maxButtonsPerRow)
			rows = append(rows, discordgo.ActionsRow{Components: bs[:n]})
			bs = bs[n:]
		}
	}
	add(buttons(c.Actions))
	var calls []card.Action
	for _, s := range c.Sections {
		calls = append(calls, s.Actions...)
	}
	add(buttons(calls))
	return rows
}

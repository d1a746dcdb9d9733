package discord

import (
	"slices"

	"github.com/bwmarrin/discordgo"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// cardComponents are the card's buttons as rows: none once it is closed
// (an empty list, so an edit removes them). Discord allows five buttons a
// row and five rows: a decision's options share rows (core allows ten, so
// two rows), every other section's buttons take a row of their own (a
// form item has at most four options and its free-text button), and the
// card's own buttons (decline) come last. The calls off (section
// indexes), unseen, have no buttons, nor has the card the own buttons
// that would approve them unseen (ownButtons).
func cardComponents(c card.Card, off []int) []discordgo.MessageComponent {
	if isBatch(c) {
		return batchComponents(c, off)
	}
	rows := []discordgo.MessageComponent{}
	add := func(bs []discordgo.MessageComponent) { rows = addRows(rows, bs) }
	var options []card.Action
	for i, s := range c.Sections {
		if s.Kind == card.SectionOption {
			options = append(options, s.Actions...)
			continue
		}
		add(buttons(options))
		options = nil
		if slices.Contains(off, i) {
			continue
		}
		row := buttons(s.Actions)
		if len(row) > maxButtonsPerRow {
			row = append(row[:maxButtonsPerRow-1], row[len(row)-1]) // keep the free-text button
		}
		add(row)
	}
	add(buttons(options))
	add(ownButtons(c, off))
	return rows
}

// isBatch reports whether c is a batch's card, whose calls' buttons
// share rows.
func isBatch(c card.Card) bool { return c.Kind == core.KindApproval && c.Progress != nil }

// batchComponents are a batch card's buttons. The card's own (approve
// all, deny all, decline) come first, so they always fit; the seen
// calls' numbered buttons share the rows left, five a row, each call's
// whole or none (callButtons). A seen call the rows cannot hold is still
// shown, and the card says how to decide it (unbuttonedLine); the calls
// off, unseen, have none, and "Approve all" goes with them (openContent):
// no button approves a call the card does not show.
func batchComponents(c card.Card, off []int) []discordgo.MessageComponent {
	rows := []discordgo.MessageComponent{}
	add := func(bs []discordgo.MessageComponent) { rows = addRows(rows, bs) }
	add(ownButtons(c, off))
	var calls []card.Action
	for _, i := range callButtons(c, off) {
		calls = append(calls, c.Sections[i].Actions...)
	}
	add(buttons(calls))
	return rows
}

// ownButtons are the buttons of the card's own actions (ownActions).
func ownButtons(c card.Card, off []int) []discordgo.MessageComponent {
	return buttons(ownActions(c, off))
}

// ownActions are the card's own actions (c.Actions); with calls left off
// (off), not those that approve, which would approve them unseen.
func ownActions(c card.Card, off []int) []card.Action {
	if len(off) == 0 {
		return c.Actions
	}
	return slices.DeleteFunc(slices.Clone(c.Actions), func(a card.Action) bool { return card.Approves(a.Ref) })
}

// buttons draws the actions that can be drawn: a ref that does not encode
// draws no button at all, nor an "Edit and approve" whose arguments its
// modal cannot hold (editFits; the card says so instead). An action that
// collects text opens a modal when clicked (see RenderModal); its button
// looks like any other.
func buttons(as []card.Action) []discordgo.MessageComponent {
	out := []discordgo.MessageComponent{}
	for _, a := range as {
		id := a.Ref.Encode()
		if id == "" || len(id) > maxCustomID || !editFits(a) {
			continue
		}
		label := unit.CutKeeping(oneLine(a.Head()), a.Keep, maxLabel)
		if label == "" {
			label = "Option"
		}
		style := discordgo.SecondaryButton
		switch a.Style {
		case card.StylePrimary:
			style = discordgo.SuccessButton
		case card.StyleDanger:
			style = discordgo.DangerButton
		}
		out = append(out, discordgo.Button{Label: label, Style: style, CustomID: id})
	}
	return out
}

// addRows is rows with buttons added, maxButtonsPerRow a row, as far as
// maxRows rows go; buttons past the last row are not drawn.
func addRows(rows, buttons []discordgo.MessageComponent) []discordgo.MessageComponent {
	for len(buttons) > 0 && len(rows) < maxRows {
		n := min(len(buttons), maxButtonsPerRow)
		rows = append(rows, discordgo.ActionsRow{Components: buttons[:n]})
		buttons = buttons[n:]
	}
	return rows
}

package discord

import (
	"fmt"
	"strings"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/bwmarrin/discordgo"
)

// The renderers below are pure: a question (as it stands) in, discordgo's
// request structs out. Golden files pin their JSON.

// noMentions keeps every message from pinging anyone, whatever the
// (untrusted) text holds.
func noMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}
}

// RenderPost is the message that puts q's card in a channel. escalated
// marks a card posted to an escalation route's room.
func RenderPost(q *core.Question, escalated bool) *discordgo.MessageSend {
	return &discordgo.MessageSend{
		Content:         cardContent(q, escalated),
		Components:      cardComponents(q),
		AllowedMentions: noMentions(),
	}
}

// RenderEdit is the edit that brings a posted card up to date: progress of
// an open form, or the outcome with every button removed. It always sets
// both content and components (an omitted field is kept by Discord; an
// empty list removes the buttons).
func RenderEdit(q *core.Question, card core.MessageRef) *discordgo.MessageEdit {
	content := cardContent(q, false)
	comps := cardComponents(q)
	return &discordgo.MessageEdit{
		ID:              card.ID,
		Channel:         card.Room,
		Content:         &content,
		Components:      &comps,
		AllowedMentions: noMentions(),
	}
}

// RenderReminder is the post that reminds a room of a still-open q. It
// replies to the card when one was posted in the same room, so people
// jump to the buttons; it carries no buttons itself, because only cards
// are edited when the question closes.
func RenderReminder(q *core.Question, room string) *discordgo.MessageSend {
	segs := []seg{
		fixed("**" + core.ReminderHeading + "** · " + core.KindTitle(q.Kind)),
	}
	if q.Reversibility == core.HardToReverse {
		segs = append(segs, fixed(" · ⚠️ **"+core.HardToReverseMarker+"**"))
	}
	segs = append(segs,
		fixed("\n**"), text(q.Text, 1200), fixed("**"),
		fixed("\nAsked by "), text(oneLine(q.Agent), 64),
		fixed(" on "+stamp(q.CreatedAt)+"; the deadline is "+stamp(q.Deadline)+"."),
	)
	m := &discordgo.MessageSend{AllowedMentions: noMentions(), Components: []discordgo.MessageComponent{}}
	var card *core.MessageRef
	for i := range q.Messages {
		if c := q.Messages[i]; c.Surface == core.SurfaceDiscord && c.Room == room {
			card = &q.Messages[i]
		}
	}
	if card != nil {
		no := false
		m.Reference = &discordgo.MessageReference{MessageID: card.ID, ChannelID: card.Room, FailIfNotExists: &no}
		segs = append(segs, fixed(" Answer on the card this replies to."))
	} else {
		segs = append(segs, fixed(" Answer with `askbridge answer "+q.ID+"` or through the API."))
	}
	segs = append(segs, fixed(footer(q)))
	m.Content = fit(segs, maxContent)
	return m
}

// RenderDigest is the "while you were away" post for one room.
func RenderDigest(d core.Digest) *discordgo.MessageSend {
	head := fmt.Sprintf("**%s** (%s to %s)\nAsked: %d · Closed: %d · Still open: %d",
		core.DigestHeading, stamp(d.From), stamp(d.To), len(d.Asked), len(d.Closed), len(d.Open))
	var lines []string
	if len(d.Open) > 0 {
		lines = append(lines, "\n\n**Still open**")
		for _, q := range d.Open {
			lines = append(lines, "\n• "+digestLine(q))
		}
	}
	if len(d.Closed) > 0 {
		lines = append(lines, "\n\n**Closed meanwhile**")
		for _, q := range d.Closed {
			lines = append(lines, "\n• "+digestLine(q)+" · "+string(q.State))
		}
	}
	content := head
	for i, l := range lines {
		more := fmt.Sprintf("\n…and %d more", len(lines)-i)
		if width(content)+width(l)+width(more) > maxContent {
			content += more
			break
		}
		content += l
	}
	return &discordgo.MessageSend{Content: content, AllowedMentions: noMentions(), Components: []discordgo.MessageComponent{}}
}

func digestLine(q *core.Question) string {
	mark := ""
	if q.Reversibility == core.HardToReverse {
		mark = "⚠️ "
	}
	return mark + core.KindTitle(q.Kind) + ": " + escape(oneLine(q.Text), 120) + " · `" + q.ID + "`"
}

// stamp is how cards show a time: the same wording as core's outcome line.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func footer(q *core.Question) string { return "\n\n-# askbridge question " + q.ID }

// cardContent is the card's text: what is asked, by whom, for what, and
// once closed, who answered what and when.
func cardContent(q *core.Question, escalated bool) string {
	head := "**" + core.KindTitle(q.Kind) + "**"
	if escalated {
		head += " · escalated: nobody answered on the first route in time"
	}
	segs := []seg{fixed(head)}
	if q.Reversibility == core.HardToReverse {
		segs = append(segs, fixed("\n⚠️ **"+core.HardToReverseMarker+"**"))
	}
	segs = append(segs, fixed("\nFrom "), text(oneLine(q.Agent), 64))
	if q.Labels.Project != "" {
		segs = append(segs, fixed(" · project "), text(oneLine(q.Labels.Project), 64))
	}
	if q.Labels.Task != "" {
		segs = append(segs, fixed(" · task "), text(oneLine(q.Labels.Task), 64))
	}
	if !q.Open() {
		segs = append(segs, fixed("\n\n**"), text(q.Text, 600), fixed("**"))
		segs = append(segs, outcomeSegs(q)...)
		segs = append(segs, fixed(footer(q)))
		return fit(segs, maxContent)
	}
	segs = append(segs, fixed("\n\n**"), text(q.Text, 1200), fixed("**"))
	if strings.TrimSpace(q.Context) != "" {
		segs = append(segs, fixed("\n"), text(q.Context, 1200))
	}
	switch q.Kind {
	case core.KindDecision:
		for i, o := range q.Options {
			segs = append(segs, fixed(fmt.Sprintf("\n\n**%d. ", i+1)), text(oneLine(o.Title), 150), fixed("**"))
			if o.Recommended {
				segs = append(segs, fixed(" (recommended)"))
			}
			segs = append(segs, fixed("\n"), text(o.Writeup, 1000))
		}
	case core.KindApproval:
		if q.Call != nil {
			segs = append(segs, fixed("\n\nTool: **"), text(oneLine(q.Call.Tool), 128), fixed("**\n"), code(string(q.Call.Arguments), 1200))
		}
	case core.KindForm:
		for i, it := range q.Items {
			segs = append(segs, fixed(fmt.Sprintf("\n\n**%d. ", i+1)), text(oneLine(it.Question), 300), fixed("**"))
			if a, ok := q.Answered(it.ID); ok {
				segs = append(segs, fixed(" ✅ "), text(oneLine(itemValue(it, a)), 300),
					fixed(" (by "), text(oneLine(core.DeciderLabel(a.Decider)), 64), fixed(")"))
				continue
			}
			for _, o := range it.Options {
				segs = append(segs, fixed("\n• "), text(oneLine(o.Label), 100))
				if o.Recommended {
					segs = append(segs, fixed(" (recommended)"))
				}
				if o.Description != "" {
					segs = append(segs, fixed(" · "), text(oneLine(o.Description), 300))
				}
			}
		}
		done, total := core.Progress(q)
		segs = append(segs, fixed(fmt.Sprintf("\n\nProgress: %d/%d answered", done, total)))
	}
	segs = append(segs, fixed(footer(q)))
	return fit(segs, maxContent)
}

// outcomeSegs are the lines a closed card shows instead of its buttons.
func outcomeSegs(q *core.Question) []seg {
	mark := map[core.State]string{
		core.StateAnswered: "✅", core.StateDeclined: "↩️", core.StateTimedOut: "⌛",
		core.StateExpired: "⌛", core.StateCancelled: "✖️",
	}[q.State]
	segs := []seg{fixed("\n\n" + mark + " "), text(core.OutcomeLine(q), 400)}
	r := q.Resolution
	if r == nil || q.State != core.StateAnswered {
		return segs
	}
	switch q.Kind {
	case core.KindClarification:
		segs = append(segs, fixed("\n**Answer:** "), text(r.Answer, 1200))
	case core.KindDecision, core.KindApproval:
		segs = append(segs, fixed("\n**Choice:** "), text(oneLine(core.ChoiceLabel(q)), 200))
	case core.KindForm:
		segs = append(segs, fixed("\n"), text(core.ChoiceLabel(q), 1200))
	}
	if r.Reason != "" {
		segs = append(segs, fixed("\n**Reason:** "), text(r.Reason, 600))
	}
	return segs
}

// itemValue is what an answered form item shows: the option's label or
// the free text.
func itemValue(it core.FormItem, a core.ItemAnswer) string {
	for _, o := range it.Options {
		if o.ID == a.OptionID {
			return o.Label
		}
	}
	return a.Text
}

// cardComponents are the buttons of q as it stands: none once it is
// closed (an empty list, so an edit removes them), and on an open form
// only the rows of the items still unanswered.
func cardComponents(q *core.Question) []discordgo.MessageComponent {
	rows := []discordgo.MessageComponent{}
	if !q.Open() {
		return rows
	}
	addRows := func(buttons []discordgo.MessageComponent) {
		for len(buttons) > 0 && len(rows) < maxRows {
			n := min(len(buttons), maxButtonsPerRow)
			rows = append(rows, discordgo.ActionsRow{Components: buttons[:n]})
			buttons = buttons[n:]
		}
	}
	skip := button("Skip: let the agent decide", discordgo.SecondaryButton,
		core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefDecline})
	switch q.Kind {
	case core.KindClarification:
		addRows(buttons(
			button("Answer", discordgo.PrimaryButton, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefText}),
			skip,
		))
	case core.KindDecision:
		var bs []*discordgo.Button
		for i, o := range q.Options {
			bs = append(bs, choiceButton(o.Title, o.Recommended, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: i}))
		}
		addRows(buttons(bs...))
		addRows(buttons(skip))
	case core.KindApproval:
		addRows(buttons(
			button("Approve", discordgo.SuccessButton, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefApprove}),
			button("Deny…", discordgo.DangerButton, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefDeny}),
		))
	case core.KindForm:
		for i, it := range q.Items {
			if _, done := q.Answered(it.ID); done {
				continue
			}
			// Rows have no headings: each label starts with its
			// item's number, as the card's text lists them.
			num := fmt.Sprintf("%d · ", i+1)
			var bs []*discordgo.Button
			for j, o := range it.Options {
				bs = append(bs, choiceButton(num+oneLine(o.Label), o.Recommended, core.Ref{QuestionID: q.ID, Item: i, Action: core.RefOption, Option: j}))
			}
			bs = append(bs, button(num+"Something else…", discordgo.SecondaryButton, core.Ref{QuestionID: q.ID, Item: i, Action: core.RefText}))
			// One row per item: a row holds at most 4 options and
			// the free-text button, which core's limits guarantee.
			row := buttons(bs...)
			if len(row) > maxButtonsPerRow {
				row = append(row[:maxButtonsPerRow-1], row[len(row)-1])
			}
			if len(rows) < maxRows && len(row) > 0 {
				rows = append(rows, discordgo.ActionsRow{Components: row})
			}
		}
		addRows(buttons(skip))
	}
	return rows
}

// choiceButton is an option's button; the recommended one stands out and
// says so.
func choiceButton(title string, recommended bool, r core.Ref) *discordgo.Button {
	label := oneLine(title)
	if label == "" {
		label = fmt.Sprintf("Option %d", r.Option+1)
	}
	if !recommended {
		return button(label, discordgo.SecondaryButton, r)
	}
	const suffix = " (recommended)"
	return button(cut(label, maxLabel-width(suffix))+suffix, discordgo.SuccessButton, r)
}

// button draws a button whose custom_id is r's encoding and nothing else;
// a ref that does not encode draws no button at all (nil).
func button(label string, style discordgo.ButtonStyle, r core.Ref) *discordgo.Button {
	id := r.Encode()
	if id == "" || len(id) > maxCustomID {
		return nil
	}
	return &discordgo.Button{Label: cut(label, maxLabel), Style: style, CustomID: id}
}

// buttons drops the buttons that could not be drawn.
func buttons(bs ...*discordgo.Button) []discordgo.MessageComponent {
	out := []discordgo.MessageComponent{}
	for _, b := range bs {
		if b != nil {
			out = append(out, *b)
		}
	}
	return out
}

// textInputID names the one input of every modal askbridge opens; the
// modal's own custom_id carries the ref.
const textInputID = "text"

// RenderModal is the modal that collects free text for a ref: the answer
// to a clarification, a form item's own answer, or the reason for a deny.
// It is built from ActionsRow + TextInput, the only shape discordgo
// v0.29.0 parses back. ok is false when the ref takes no free text.
func RenderModal(q *core.Question, r core.Ref) (resp *discordgo.InteractionResponse, ok bool) {
	id := r.Encode()
	if id == "" {
		return nil, false
	}
	var title, label, placeholder string
	required, max := true, min(core.MaxAnswerLen, maxInputLength)
	switch {
	case r.Action == core.RefText && q.Kind == core.KindClarification && r.Item == -1:
		title, label, placeholder = "Answer the question", oneLine(q.Text), "Your answer"
	case r.Action == core.RefText && q.Kind == core.KindForm && r.Item >= 0 && r.Item < len(q.Items):
		title, label, placeholder = "Your own answer", oneLine(q.Items[r.Item].Question), "When no option fits"
	case r.Action == core.RefDeny && q.Kind == core.KindApproval:
		title, label, placeholder = "Deny the tool call", "Reason (optional)", "Why not? The agent reads this."
		required, max = false, min(core.MaxReasonLen, maxInputLength)
	default:
		return nil, false
	}
	if label == "" {
		label = "Answer"
	}
	return &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseModal,
		Data: &discordgo.InteractionResponseData{
			CustomID: id,
			Title:    cut(title, maxModalTitle),
			Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
				discordgo.TextInput{
					CustomID:    textInputID,
					Label:       cut(label, maxInputLabel),
					Style:       discordgo.TextInputParagraph,
					Placeholder: cut(placeholder, maxPlaceholder),
					Required:    required,
					MaxLength:   max,
				},
			}}},
		},
	}, true
}

// RenderUpdate answers a click by editing the clicked card in the same
// response (UPDATE_MESSAGE), with content and components both set.
func RenderUpdate(q *core.Question) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseUpdateMessage,
		Data: &discordgo.InteractionResponseData{
			Content:         cardContent(q, false),
			Components:      cardComponents(q),
			AllowedMentions: noMentions(),
		},
	}
}

// RenderNote is a private (ephemeral) reply to the one who clicked.
func RenderNote(note string) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{
			Content:         escape(note, maxContent),
			Components:      []discordgo.MessageComponent{},
			Flags:           discordgo.MessageFlagsEphemeral,
			AllowedMentions: noMentions(),
		},
	}
}

// seg is one piece of a message: markdown we wrote (kept whole), or
// untrusted text that is escaped and may be cut to make the whole fit.
type seg struct {
	fixed string
	text  string
	max   int  // the text's own cap; 0 for a fixed piece
	code  bool // show the text in a code block rather than escaped
}

func fixed(s string) seg { return seg{fixed: s} }

func text(s string, max int) seg {
	s = strings.TrimSpace(s)
	if s == "" {
		return seg{}
	}
	return seg{text: s, max: max}
}

func code(s string, max int) seg { return seg{text: s, max: max, code: true} }

func (s seg) render(limit int) string {
	if s.max == 0 {
		return s.fixed
	}
	n := min(s.max, limit)
	if s.code {
		return codeBlock(s.text, n)
	}
	return escape(s.text, n)
}

// fit joins segs within limit. Fixed pieces stay whole; untrusted pieces
// share what is left by water-filling: the longest are cut first, to one
// common cap, so a huge context cannot crowd out the options.
func fit(segs []seg, limit int) string {
	join := func(c int) string {
		var b strings.Builder
		for _, s := range segs {
			b.WriteString(s.render(c))
		}
		return b.String()
	}
	if out := join(limit); width(out) <= limit {
		return out
	}
	lo, hi := 0, limit // the largest cap that fits is in [lo, hi)
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if width(join(mid)) <= limit {
			lo = mid
		} else {
			hi = mid
		}
	}
	// Fixed pieces alone could overflow only with absurd inputs; cut
	// the whole as a last resort so Discord never refuses the message.
	return cut(join(lo), limit)
}

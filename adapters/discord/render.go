package discord

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/textlimit"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/bwmarrin/discordgo"
)

// The renderers below are pure: a question (as it stands) in, discordgo's
// request structs out. Golden files pin their JSON.

// RenderPost is the message that puts a card in a channel.
func RenderPost(c card.Card) *discordgo.MessageSend {
	content, comps := cardMessage(c)
	return &discordgo.MessageSend{
		Content:         content,
		Components:      comps,
		AllowedMentions: noMentions(),
		Flags:           noEmbeds,
	}
}

// RenderEdit is the edit that brings a posted card up to date: progress of
// an open form, or the outcome with every button removed. It always sets
// both content and components (an omitted field is kept by Discord; an
// empty list removes the buttons).
func RenderEdit(c card.Card, card core.MessageRef) *discordgo.MessageEdit {
	content, comps := cardMessage(c)
	return &discordgo.MessageEdit{
		ID:              card.ID,
		Channel:         card.Room,
		Content:         &content,
		Components:      &comps,
		AllowedMentions: noMentions(),
		Flags:           noEmbeds,
	}
}

// RenderReminder is the post that reminds a room of a still-open question
// (card.NewReminder). It replies to the card when one was posted in the
// same room, so people jump to the buttons; it carries no buttons itself,
// because only cards are edited when the question closes.
func RenderReminder(c card.Card) *discordgo.MessageSend {
	segs := []seg{fixed("**" + card.ReminderHeading + "** · " + c.Heading)}
	for _, m := range c.Markers {
		if m != card.MarkerReminder && m.Warning() {
			segs = append(segs, fixed(" · ⚠️ **"+m.Text()+"**"))
		}
	}
	segs = append(segs,
		fixed("\n**"), text(c.Text, 1200), fixed("**"),
		fixed("\nAsked by "), text(oneLine(string(c.Meta.Agent)), 64),
		fixed(" on "+stamp(c.Meta.Asked)+"; the deadline is "+stamp(c.Meta.Deadline)+"."),
	)
	m := &discordgo.MessageSend{AllowedMentions: noMentions(), Components: []discordgo.MessageComponent{}, Flags: noEmbeds}
	if card := c.ReplyTo; card != nil {
		no := false
		m.Reference = &discordgo.MessageReference{MessageID: card.ID, ChannelID: card.Room, FailIfNotExists: &no}
		segs = append(segs, fixed(" Answer on the card this replies to."))
	} else {
		segs = append(segs, fixed(" Answer with `askbridge answer "+string(c.QuestionID)+"` or through the API."))
	}
	segs = append(segs, fixed(footer(string(c.QuestionID))))
	// The mentions get what the rest leaves, the question's text uncut:
	// named whole, before the footer, never cut mid-mention by fit.
	label := "\n" + card.AwaitingLabel + ": "
	room := maxContent - width(label)
	for _, s := range segs {
		room -= width(s.render(maxContent))
	}
	if who, allowed := discordMentions(c.Mentions, room); who != "" {
		// Only the people and roles named here are notified: nothing a
		// person wrote into the question can ping anyone.
		segs = slices.Insert(segs, len(segs)-1, fixed(label+who))
		m.AllowedMentions = allowed
	}
	m.Content = fit(segs, maxContent)
	return m
}

// RenderDigest is the "while you were away" post for one room.
func RenderDigest(d core.Digest) *discordgo.MessageSend {
	head := fmt.Sprintf("**%s** (%s to %s)\nAsked: %s · Closed: %s · Still open: %s",
		card.DigestHeading, stamp(d.From), stamp(d.To),
		card.DigestCount(len(d.Asked), d.AskedMore), card.DigestCount(len(d.Closed), d.ClosedMore), card.DigestCount(len(d.Open), d.OpenMore))
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
	// What is left out is counted in questions (lines holds two
	// headings too), and core's cap, where it stopped a list, is said.
	capped := d.OpenMore || d.ClosedMore
	left := len(d.Open) + len(d.Closed)
	more := func(left int) string {
		if s := card.DigestNotListed(left, capped); s != "" {
			return "\n" + s
		}
		return ""
	}
	content := head
	for _, l := range lines {
		after := left
		if !strings.HasPrefix(l, "\n\n") {
			after-- // a question, not a heading
		}
		if width(content)+width(l)+width(more(after)) > maxContent {
			break
		}
		content += l
		left = after
	}
	content += more(left)
	return &discordgo.MessageSend{Content: content, AllowedMentions: noMentions(), Components: []discordgo.MessageComponent{}, Flags: noEmbeds}
}

func digestLine(q *core.Question) string {
	mark := ""
	if q.Reversibility == core.HardToReverse {
		mark = "⚠️ "
	}
	return mark + card.KindTitle(q.Kind) + ": " + escape(oneLine(q.Text), 120) + " · `" + string(q.ID) + "`"
}

// stamp is how cards show a time: the same wording as core's outcome line.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func footer(id string) string { return "\n\n-# askbridge question " + id }

// cardMessage is the card's content and its buttons, planned together:
// the buttons of a call the content leaves off are left off too
// (openContent).
func cardMessage(c card.Card) (string, []discordgo.MessageComponent) {
	content, off := cardContent(c)
	return content, cardComponents(c, off)
}

// cardContent is the card's text: what is asked, by whom, for what, and
// once closed, who answered what and when, and off, the section indexes
// of the calls it leaves off, buttons and all (openContent). Who or what
// closed it, and each call of a batch with who decided it, are kept
// whole (law 12); the agent's text gives way to them. A closed batch's
// calls give way whole, from the last, before the agent's text is cut
// too short to read; and if its verdicts still do not fit a line each,
// calls decided alike share one, their tools' names giving way
// (keepRuns).
func cardContent(c card.Card) (content string, off []int) {
	if c.Outcome == nil {
		return openContent(c)
	}
	for _, k := range []keeping{keepLines, keepRuns} {
		if out, ok := cardContentWith(c, k); ok {
			return out, nil
		}
	}
	// Only absurd inputs get here (a score of deciders each at its cap):
	// the outcome is then cut with the rest.
	out, _ := cardContentWith(c, keepNone)
	return out, nil
}

// cardContentWith is a closed card's text with as much of the outcome
// kept whole as k says; ok is false when what is kept whole does not fit
// even with every call of a closed batch left out.
func cardContentWith(c card.Card, k keeping) (string, bool) {
	parts := withOff(c, cardParts(c, k), nil)
	droppable := dropping(parts)
	// Keep the most calls that leave the agent's text minShown; fewer
	// calls never leave less room.
	try := func(keep int) (string, int) { return fitCap(withCalls(parts, keep, droppable), maxContent) }
	out, got := try(droppable)
	if got >= minShown || droppable == 0 {
		return out, got >= 0
	}
	keep := textlimit.Most(droppable-1, func(keep int) bool { _, got := try(keep); return got >= minShown })
	out, got = try(max(keep, 0))
	return out, got >= 0
}

// cardParts are the card's segs in parts, with as much of a closed
// card's outcome kept whole as k says: the head, a part for each section
// (sect), and the tail. A batch's decided calls may be left out whole
// (drop): closed, their verdicts and deciders are in the outcome; open,
// in a line of their own (withDecided).
func cardParts(c card.Card, k keeping) []part {
	closed := c.Outcome != nil
	var parts []part
	parts = append(parts, part{segs: append(headSegs(c), fixed("\n\n**"), text(c.Text, 1200), fixed("**"))})
	for i, s := range c.Sections {
		p := part{sect: i + 1}
		switch {
		case closed && c.Progress != nil && s.Kind == card.SectionCall:
			s.Answer = nil // its verdict and decider are in the outcome
			p.segs, p.drop = callSegs(c.QuestionID, s, true, false), true
		case s.Kind == card.SectionCall:
			p.segs = callSegs(c.QuestionID, s, c.Progress != nil, !closed && s.Answer == nil)
			p.drop = c.Progress != nil && s.Answer != nil
		default:
			p.segs = sectionSegs(s)
		}
		parts = append(parts, p)
	}
	var tail []seg
	if c.Progress != nil && !closed {
		tail = append(tail, fixed("\n\n"+c.Progress.String()))
	}
	if c.Tally != nil {
		tail = append(tail, fixed("\n"))
		for _, l := range c.Tally.Lines {
			tail = append(tail, fixed("\n🗳 "), text(l, 300))
		}
	}
	if closed {
		tail = append(tail, outcomeSegs(c, k)...)
	}
	tail = append(tail, fixed(footer(string(c.QuestionID))))
	return append(parts, part{segs: tail})
}

// headSegs are the card's heading, its markers and the line that says
// who asks, in which run, for what, and by when.
func headSegs(c card.Card) []seg {
	segs := []seg{fixed("**" + c.Heading + "**")}
	for _, m := range c.Markers {
		if m.Warning() {
			segs = append(segs, fixed("\n⚠️ **"+m.Text()+"**"))
		} else {
			segs = append(segs, fixed("\n*"+m.Text()+"*"))
		}
	}
	segs = append(segs, fixed("\nFrom "), text(oneLine(string(c.Meta.Agent)), 64))
	for _, l := range []struct{ name, value string }{
		{"run", string(c.Meta.RunID)}, {"project", c.Meta.Labels.Project}, {"task", c.Meta.Labels.Task},
	} {
		if l.value != "" {
			segs = append(segs, fixed(" · "+l.name+" "), text(oneLine(l.value), 64))
		}
	}
	if !c.Meta.Deadline.IsZero() {
		segs = append(segs, fixed(" · answer by "+stamp(c.Meta.Deadline)))
	}
	return segs
}

// sectionSegs are one of a card's sections, by its kind, but for a call
// (callSegs).
func sectionSegs(s card.Section) []seg {
	switch s.Kind {
	case card.SectionContext:
		return []seg{fixed("\n"), text(s.Body, 1200)}
	case card.SectionOption:
		segs := []seg{fixed(fmt.Sprintf("\n\n**%d. ", s.Index+1)), text(oneLine(s.Title), 150), fixed("**")}
		if s.Recommended {
			segs = append(segs, fixed(card.RecommendedNote))
		}
		return append(segs, fixed("\n"), text(s.Body, 1000))
	case card.SectionItem:
		return itemSegs(s)
	default:
		return []seg{fixed("\n\n**"), text(oneLine(s.Title), 150), fixed("**\n"), text(s.Body, 1000)}
	}
}

// callMax is the most of a call's arguments a card shows.
const callMax = 1200

// callSegs are a tool call of question id's approval or, numbered, of
// its batch: its tool, arguments, digest and decision. A call still to
// decide (undecided) shows its tool whole, and its arguments no shorter
// than their floor once openContent sets it: shown, it is seen.
func callSegs(id core.QuestionID, s card.Section, numbered, undecided bool) []seg {
	num := ""
	if numbered {
		num = fmt.Sprintf("%d. ", s.Index+1)
	}
	tool := text(oneLine(s.Title), 128)
	if undecided {
		// Each rune escapes to at most two units: this is the whole.
		tool = fixed(escape(oneLine(s.Title), 2*core.MaxToolLen))
	}
	segs := []seg{fixed("\n\n" + num + "Tool: **"), tool, fixed("**\n"), code(s.Body, callMax, id)}
	if s.Hash != "" {
		segs = append(segs, fixed("\nsha256 `"+s.Hash+"…`"))
	}
	if a := s.Answer; a != nil { // a decided call: approved or denied, so no check mark
		segs = append(segs, fixed("\n**Decided:** "), text(oneLine(a.Text), 300), fixed(" (by "), text(oneLine(a.By), 64), fixed(")"))
	}
	return segs
}

// itemSegs are a form's item: its answer once it has one, else its
// choices.
func itemSegs(s card.Section) []seg {
	segs := []seg{fixed(fmt.Sprintf("\n\n**%d. ", s.Index+1)), text(oneLine(s.Title), 300), fixed("**")}
	if a := s.Answer; a != nil {
		return append(segs, fixed(" ✅ "), text(oneLine(a.Text), 300), fixed(" (by "), text(oneLine(a.By), 64), fixed(")"))
	}
	for _, o := range s.Choices {
		segs = append(segs, fixed("\n• "), text(oneLine(o.Label), 100))
		if o.Recommended {
			segs = append(segs, fixed(card.RecommendedNote))
		}
		if o.Description != "" {
			segs = append(segs, fixed(" · "), text(oneLine(o.Description), 300))
		}
	}
	return segs
}

// textInputID names the one input of every modal askbridge opens; the
// modal's own custom_id carries the ref.
const textInputID = "text"

// RenderModal is the modal that collects free text for the card's action
// r: the answer to a clarification, a form item's own answer, or the
// reason for a deny. It is built from ActionsRow + TextInput, the only
// shape discordgo v0.29.0 parses back. ok is false when the card has no
// such action, it takes no free text, or it is an edit whose arguments
// the input cannot hold (noModal says which).
func RenderModal(c card.Card, r core.Ref) (resp *discordgo.InteractionResponse, ok bool) {
	id := r.Encode()
	if id == "" {
		return nil, false
	}
	act, about, found := actionOf(c, r)
	if !found || act.Input == card.InputNone {
		return nil, false
	}
	var title, label, placeholder, value string
	required, max := true, min(core.MaxAnswerLen, maxInputLength)
	switch {
	case act.Input == card.InputArguments:
		// The arguments as asked, to change in place; core checks the
		// JSON and which keys changed on submit.
		// Arguments the input cannot hold whole get no modal at all
		// (editFits): started empty, an edit would replace them.
		if !editFits(act) {
			return nil, false
		}
		title, label, placeholder = card.LabelEditApprove, "Arguments (one JSON object)", "{}"
		max, value = maxArgumentsInput, act.Prefill
	case act.Input == card.InputOptional:
		title, label, placeholder = act.Label, "Reason (optional)", "Why not? The agent reads this."
		if r.Action == core.RefDeny {
			title = denyTitle(c, r)
		}
		required, max = false, min(core.MaxReasonLen, maxInputLength)
	case r.Item >= 0:
		title, label, placeholder = "Your own answer", oneLine(about), "When no option fits"
	default:
		title, label, placeholder = "Answer the question", oneLine(about), "Your answer"
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
					Value:       value,
				},
			}}},
		},
	}, true
}

// denyTitle is the title of a Deny's modal. A batch's "Deny all" denies
// every call still undecided, so its title says so, and how many: titled
// as a call's own Deny, it read as denying one.
func denyTitle(c card.Card, r core.Ref) string {
	if r.Item >= 0 || !isBatch(c) {
		return "Deny the tool call"
	}
	left := c.Progress.Total - c.Progress.Done
	switch {
	case c.Progress.Done == 0:
		return fmt.Sprintf("Deny all %d tool calls", left) // a batch has 2 or more
	case left == 1:
		return "Deny the last undecided tool call"
	}
	return fmt.Sprintf("Deny the %d undecided tool calls", left)
}

// actionOf finds the card's action carrying r, and what it is about: its
// section's title (a form item's question), or else the question.
func actionOf(c card.Card, r core.Ref) (card.Action, string, bool) {
	for _, s := range c.Sections {
		for _, a := range s.Actions {
			if a.Ref == r {
				if s.Kind == card.SectionItem {
					return a, s.Title, true
				}
				return a, c.Text, true
			}
		}
	}
	for _, a := range c.Actions {
		if a.Ref == r {
			return a, c.Text, true
		}
	}
	return card.Action{}, "", false
}

// RenderUpdate answers a click by editing the clicked card in the same
// response (UPDATE_MESSAGE), with content and components both set.
func RenderUpdate(c card.Card) *discordgo.InteractionResponse {
	content, comps := cardMessage(c)
	return &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseUpdateMessage,
		Data: &discordgo.InteractionResponseData{
			Content:         content,
			Components:      comps,
			AllowedMentions: noMentions(),
			Flags:           noEmbeds,
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
			Flags:           discordgo.MessageFlagsEphemeral | noEmbeds,
			AllowedMentions: noMentions(),
		},
	}
}

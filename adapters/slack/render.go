package slack

import (
	"fmt"
	"math"
	"strings"

	"github.com/askbridge/askbridge/adapters/internal/textlimit"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/slack-go/slack"
)

// Message is what is sent to Slack for a card, a reminder or a digest:
// the notification text (shown in notifications and to clients without
// Block Kit) and the blocks.
type Message struct {
	Text   string
	Blocks []slack.Block
}

// Budgets, in characters, for the parts of a card. Together they keep the
// worst case (every field at core's maximum) within Block Kit's per-field
// limits and well under the ~12k characters at which Slack refuses a
// message's blocks (msg_blocks_too_long); render_test.go checks it.
const (
	budgetQuestion = 1500
	budgetContext  = 800
	budgetOptions  = 3600 // all of a decision's options, shared
	budgetOption   = 1600 // one option, when there are few
	budgetItems    = 3600 // all of a form's items, shared
	budgetItemMax  = 2600 // one item, when there are few
	budgetArgs     = 1200 // an approval's argument summary
	budgetCalls    = 3600 // all of a batch's calls' arguments, shared
	budgetAnswer   = 1500 // a closed card's answer
	budgetLabel    = 128  // agent, project, task, tool names on a card
	digestListed   = 15   // open questions listed by name in a digest
)

// headPrefix starts the block_id of every card's first block; the rest is
// the question id. The id is kept on every rendering, open or closed, so
// a reply in a card's thread finds its question (see QuestionOfCard).
const headPrefix = "askbridge:"

const timeLayout = "2006-01-02 15:04 UTC"

// render is Card's rendering as f keeps it.
func render(c card.Card, f fit) Message {
	var blocks []slack.Block
	add := func(b slack.Block) {
		if b != nil {
			blocks = append(blocks, b)
		}
	}
	add(section(headPrefix+string(c.QuestionID), head(c)))
	add(ctxBlock("meta", metaLine(c, f)))
	add(section("question", esc(c.Text, f.b(budgetQuestion))))

	options, calls := 0, 0
	for _, s := range c.Sections {
		switch s.Kind {
		case card.SectionOption, card.SectionItem:
			options++
		case card.SectionCall:
			calls++
		}
	}
	// A batch's calls share one budget for their arguments, as a
	// decision's options share theirs; the calls left off take none.
	// With a call left off, the card's own buttons that would approve it
	// unseen go.
	own, off := c.Actions, max(0, undecidedCalls(c)-f.seen)
	if off > 0 {
		own = withoutApproving(own)
	}
	calls -= off
	perCall := f.b(min(budgetArgs, budgetCalls/max(1, calls)))
	shown := false // the form's progress, above its first item
	undecided := 0 // undecided calls of a batch so far
	var unseen []int
	for _, s := range c.Sections {
		switch s.Kind {
		case card.SectionContext:
			add(section("context", "_Context_\n"+esc(s.Body, f.b(budgetContext))))
		case card.SectionOption:
			per := f.b(min(budgetOption, budgetOptions/max(1, options)))
			text := "*" + esc(s.Title, f.b(core.MaxTitleLen)) + "*"
			if s.Recommended {
				text += card.RecommendedNote
			}
			text += "\n" + esc(s.Body, max(0, per-textLen(text)-1))
			var b *slack.ButtonBlockElement
			if len(s.Actions) > 0 {
				b = button(s.Actions[0])
			}
			add(sectionWith(fmt.Sprintf("option-%d", s.Index), text, b))
		case card.SectionCall:
			bs, room, tool := drawn(s.Actions), perCall, f.b(budgetLabel)
			decide := "" // how to decide a seen call without its buttons
			if c.Progress != nil && len(bs) > 0 {
				// an undecided call of a batch: past f.seen it is left
				// off whole, past f.buttoned it is shown without its
				// buttons
				undecided++
				if undecided > f.seen {
					unseen = append(unseen, s.Index)
					break
				}
				if undecided > f.buttoned {
					bs, decide = nil, "\n"+decideLine(c.QuestionID, own)
				}
			}
			if len(bs) > 0 || decide != "" { // what approves it, approves what the card shows
				room, tool = f.floors.atLeast(s, room), math.MaxInt
			}
			if c.Progress == nil {
				add(section("call", approvalCall(c.QuestionID, s, f, room, tool)))
				add(actions("choose", bs...))
				break
			}
			add(section(fmt.Sprintf("call-%d", s.Index), fmt.Sprintf("*%d.* ", s.Index+1)+approvalCall(c.QuestionID, s, f, room, tool)+decide))
			add(actions(fmt.Sprintf("call-%d-choose", s.Index), bs...))
		case card.SectionItem:
			if c.Progress != nil && !shown {
				add(ctxBlock("progress", c.Progress.String()))
				shown = true
			}
			per := f.b(min(budgetItemMax, budgetItems/max(1, options)))
			add(section(fmt.Sprintf("item-%d", s.Index), formItem(s, per, f)))
			add(actions(fmt.Sprintf("item-%d-choose", s.Index), drawn(s.Actions)...))
		default:
			add(section(string(s.Kind), "*"+esc(s.Title, f.b(core.MaxTitleLen))+"*\n"+esc(s.Body, f.b(budgetContext))))
		}
	}
	if len(unseen) > 0 {
		add(ctxBlock(unbuttonedBlock, unseenNote(c, unseen)))
	}
	if c.Progress != nil && !shown && c.Outcome == nil {
		add(ctxBlock("progress", c.Progress.String()))
	}
	if c.Tally != nil {
		add(ctxBlock("tally", esc(strings.Join(c.Tally.Lines, "\n"), f.who(600))))
	}
	if c.Outcome != nil {
		add(section("outcome", outcome(c, f)))
		return Message{Text: fallback(c), Blocks: blocks}
	}
	if c.TakesText() {
		if c.Kind == core.KindForm {
			add(ctxBlock("howto", "No option fits? Reply in this thread: your reply answers the first unanswered item."))
		} else {
			add(ctxBlock("howto", "Reply in this thread to answer."))
		}
	}
	add(actions("decline", drawn(own)...))
	return Message{Text: fallback(c), Blocks: blocks}
}

// head is the card's first line: its heading and markers. Markers about
// the choice itself are loud; those about the message are quiet.
func head(c card.Card) string {
	s := "*" + c.Heading + "*"
	for _, m := range c.Markers {
		if m.Warning() {
			s += "  ·  *" + m.Text() + "*"
		} else {
			s += "  ·  _" + m.Text() + "_"
		}
	}
	return s
}

// metaLine says who asked, for what, until when, and the question's id.
func metaLine(c card.Card, f fit) string {
	m := c.Meta
	parts := []string{"Asked by *" + esc(string(m.Agent), f.b(budgetLabel)) + "*"}
	if m.RunID != "" {
		parts = append(parts, "run *"+esc(string(m.RunID), f.b(budgetLabel))+"*")
	}
	if m.Labels.Project != "" {
		parts = append(parts, "project *"+esc(m.Labels.Project, f.b(budgetLabel))+"*")
	}
	if m.Labels.Task != "" {
		parts = append(parts, "task *"+esc(m.Labels.Task, f.b(budgetLabel))+"*")
	}
	if !m.Deadline.IsZero() {
		parts = append(parts, "answer by "+m.Deadline.UTC().Format(timeLayout))
	}
	parts = append(parts, "`"+string(c.QuestionID)+"`")
	return strings.Join(parts, "  ·  ")
}

// approvalCall shows the gated tool call of question id: its name within
// tool (whole beside buttons that approve it: core caps it at
// core.MaxToolLen), its arguments within args (their middle giving way:
// code) and the start of their hash.
func approvalCall(id core.QuestionID, s card.Section, f fit, args, tool int) string {
	out := "*Tool:* " + codeSpan(s.Title, tool) + "\n*Arguments:*\n" + code(s.Body, args, id)
	if s.Hash != "" {
		out += "\nsha256 `" + s.Hash + "…`"
	}
	if tooLongToEdit(s) {
		out += "\n_" + TooLongToEdit + "_"
	}
	if a := s.Answer; a != nil { // a decided call of a batch
		out += fmt.Sprintf("\n*Decided:* %s  (by %s, %s)", esc(a.Text, f.b(budgetLabel)), esc(a.By, f.who(budgetLabel)), a.At.UTC().Format(timeLayout))
	}
	return out
}

// formItem is one form item: its question, its options with their
// descriptions and, once answered, the answer.
func formItem(s card.Section, budget int, f fit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d. %s*", s.Index+1, esc(s.Title, budget/3))
	perOpt := (budget - textLen(b.String())) / max(1, len(s.Choices)+1)
	for _, o := range s.Choices {
		line := "\n• *" + esc(o.Label, min(perOpt/2, core.MaxTitleLen)) + "*"
		if o.Recommended {
			line += card.RecommendedNote
		}
		if o.Description != "" {
			line += " — " + esc(o.Description, max(0, perOpt-textLen(line)-3))
		}
		b.WriteString(line)
	}
	if a := s.Answer; a != nil {
		fmt.Fprintf(&b, "\n*Answered:* %s  (by %s, %s)", esc(a.Text, perOpt), esc(a.By, f.who(budgetLabel)), a.At.UTC().Format(timeLayout))
	}
	return b.String()
}

// outcome is a closed card's last section: who closed it, how and when,
// and what was chosen.
func outcome(c card.Card, f fit) string {
	o := c.Outcome
	s := "*" + esc(o.Line, f.who(maxSectionText/4)) + "*"
	if o.Label == "" {
		return s
	}
	switch c.Kind {
	case core.KindClarification, core.KindForm: // people's words: a block of their own
		s += "\n*" + o.Label + ":*\n" + esc(o.Choice, f.b(budgetAnswer))
	default:
		s += "\n" + o.Label + ": *" + esc(o.Choice, f.b(budgetAnswer)) + "*"
	}
	if o.Reason != "" {
		s += "\nReason: " + esc(o.Reason, f.b(budgetAnswer/3))
	}
	return s
}

// fallback is the notification text: what the card is about in a line.
func fallback(c card.Card) string {
	s := c.Heading + ": " + textlimit.FirstLine(c.Text)
	for _, m := range c.Markers {
		if m.Warning() {
			s = "[" + m.Text() + "] " + s
		}
	}
	if c.Outcome != nil {
		s += " — " + c.Outcome.Line
	}
	return esc(s, 300)
}

// Reminder renders a reminder (card.NewReminder). With the card in the
// same room it is posted in the card's thread, right under the card;
// otherwise it names the question, since there is no card to point to.
func Reminder(c card.Card) Message {
	s := "*" + card.ReminderHeading + "*"
	if !c.Meta.Deadline.IsZero() {
		s += " (answer by " + c.Meta.Deadline.UTC().Format(timeLayout) + ")"
	}
	if c.ReplyTo == nil {
		s += "\n" + esc(c.Heading+" from "+string(c.Meta.Agent)+": "+textlimit.FirstLine(c.Text), 400) + "  `" + string(c.QuestionID) + "`"
	}
	for _, m := range c.Markers {
		if m != card.MarkerReminder && m.Warning() {
			s += "  ·  *" + m.Text() + "*"
		}
	}
	label := "\n" + card.AwaitingLabel + ": "
	if who := slackMentions(c.Mentions, maxSectionText-textLen(s+label)); who != "" {
		s += label + who
	}
	return Message{
		Text:   esc(card.ReminderHeading+": "+textlimit.FirstLine(c.Text), 300),
		Blocks: []slack.Block{section(reminderBlock, s)},
	}
}

// Digest renders "while you were away": counts, and the open questions by
// id and first line.
func Digest(d core.Digest) Message {
	asked, closed, open := card.DigestCount(len(d.Asked), d.AskedMore), card.DigestCount(len(d.Closed), d.ClosedMore), card.DigestCount(len(d.Open), d.OpenMore)
	head := fmt.Sprintf("*%s* (askbridge was away from %s to %s)\n%s asked  ·  %s closed  ·  %s still open", card.DigestHeading,
		d.From.UTC().Format(timeLayout), d.To.UTC().Format(timeLayout), asked, closed, open)
	blocks := []slack.Block{section("digest", head)}
	if len(d.Open) > 0 {
		var b strings.Builder
		b.WriteString("*Still open:*")
		for i, q := range d.Open {
			if i == digestListed {
				break
			}
			line := "\n• `" + string(q.ID) + "` " + esc(textlimit.FirstLine(q.Text), 140)
			if q.Reversibility == core.HardToReverse {
				line += "  *" + card.HardToReverseMarker + "*"
			}
			b.WriteString(line)
		}
		if more := card.DigestNotListed(max(len(d.Open)-digestListed, 0), d.OpenMore); more != "" {
			b.WriteString("\n" + more)
		}
		blocks = append(blocks, section("digest-open", b.String()))
	}
	return Message{
		Text:   fmt.Sprintf("%s: %s asked, %s closed, %s still open", card.DigestHeading, asked, closed, open),
		Blocks: blocks,
	}
}

// Note is a private note to one person: a refusal or a hint.
func Note(text string) Message {
	return Message{Text: esc(text, maxFallback), Blocks: []slack.Block{section("note", esc(text, maxSectionText))}}
}

func section(id, text string) *slack.SectionBlock {
	return slack.NewSectionBlock(mrkdwn(text), nil, nil, slack.SectionBlockOptionBlockID(id))
}

// mrkdwn is a mrkdwn text object of text we wrote around escaped text. It
// is verbatim: otherwise Slack parses plain text for mentions, channel
// names and URLs, and an agent named "@channel" would ping the room.
func mrkdwn(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, text, false, true)
}

// sectionWith is a section with a button beside it; with no button (its
// ref would not encode) it is a plain section.
func sectionWith(id, text string, b *slack.ButtonBlockElement) *slack.SectionBlock {
	var acc *slack.Accessory
	if b != nil {
		acc = slack.NewAccessory(b)
	}
	return slack.NewSectionBlock(mrkdwn(text), nil, acc, slack.SectionBlockOptionBlockID(id))
}

// ctxBlock is a context block of text (mrkdwn).
func ctxBlock(id, text string) *slack.ContextBlock {
	return slack.NewContextBlock(id, mrkdwn(text))
}

// actions is an actions block of the buttons that rendered, or nil when
// none did.
func actions(id string, bs ...*slack.ButtonBlockElement) slack.Block {
	var els []slack.BlockElement
	for _, b := range bs {
		if b != nil {
			els = append(els, b)
		}
	}
	if len(els) == 0 {
		return nil
	}
	return slack.NewActionBlock(id, els...)
}

// drawn are the actions that draw a button on Slack: all but those that
// collect text, which Slack takes as a thread reply. Editing a call's
// arguments is a button that opens a modal (EditView), drawn only when
// the modal holds them (editFits; the card says so instead).
func drawn(as []card.Action) []*slack.ButtonBlockElement {
	var out []*slack.ButtonBlockElement
	for _, a := range as {
		if a.Input != card.InputRequired && editFits(a) {
			out = append(out, button(a))
		}
	}
	return out
}

// button carries the action's ref, encoded, as both its value and its
// action_id (refs are unique within a card, and nothing else may ride on a
// button). A ref that does not encode gets no button at all.
func button(a card.Action) *slack.ButtonBlockElement {
	v := a.Ref.Encode()
	if v == "" {
		return nil
	}
	label := unit.CutKeeping(textlimit.OneLine(a.Head()), a.Keep, maxButtonText)
	b := slack.NewButtonBlockElement(v, v, slack.NewTextBlockObject(slack.PlainTextType, label, false, false))
	switch a.Style {
	case card.StylePrimary:
		b.WithStyle(slack.StylePrimary)
	case card.StyleDanger:
		b.WithStyle(slack.StyleDanger)
	}
	return b
}

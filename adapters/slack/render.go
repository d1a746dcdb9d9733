package slack

import (
	"fmt"
	"strings"

	"github.com/askbridge/askbridge/adapters/internal/textlimit"
	"github.com/askbridge/askbridge/core"
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
	budgetAnswer   = 1500 // a closed card's answer
	budgetLabel    = 128  // agent, project, task, tool names on a card
	digestListed   = 15   // open questions listed by name in a digest
)

// headPrefix starts the block_id of every card's first block; the rest is
// the question id. The id is kept on every rendering, open or closed, so
// a reply in a card's thread finds its question (see QuestionOfCard).
const headPrefix = "askbridge:"

const timeLayout = "2006-01-02 15:04 UTC"

// Card renders q as a card: its first post (escalated marks a post in an
// escalation route's room) and every later edit. An open question gets its
// buttons, one per choice, each carrying only an encoded core.Ref; a closed
// one shows who closed it, how and when, and no buttons.
func Card(q *core.Question, escalated bool) Message {
	var blocks []slack.Block
	add := func(b slack.Block) {
		if b != nil {
			blocks = append(blocks, b)
		}
	}

	head := "*" + core.KindTitle(q.Kind) + "*"
	if q.Reversibility == core.HardToReverse {
		head += "  ·  *" + core.HardToReverseMarker + "*"
	}
	if escalated && q.Open() {
		head += "  ·  escalated: nobody answered in time"
	}
	add(section(headPrefix+q.ID, head, false))
	add(ctxBlock("meta", metaLine(q)))
	add(section("question", esc(q.Text, budgetQuestion), true))
	if strings.TrimSpace(q.Context) != "" {
		add(section("context", "_Context_\n"+esc(q.Context, budgetContext), true))
	}

	if !q.Open() {
		add(section("outcome", outcome(q), true))
		return Message{Text: fallback(q), Blocks: blocks}
	}

	switch q.Kind {
	case core.KindDecision:
		per := min(budgetOption, budgetOptions/max(1, len(q.Options)))
		for i, o := range q.Options {
			label := o.Title
			style := slack.StyleDefault
			text := "*" + esc(o.Title, core.MaxTitleLen) + "*"
			if o.Recommended {
				label = cut(plain(o.Title, maxButtonText), maxButtonText-len(" (Recommended)")) + " (Recommended)"
				style = slack.StylePrimary
				text += "  (Recommended)"
			}
			text += "\n" + esc(o.Writeup, max(0, per-textLen(text)-1))
			b := button(core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: i}, label, style)
			add(sectionWith(fmt.Sprintf("option-%d", i), text, b))
		}
	case core.KindApproval:
		add(section("call", approvalCall(q), true))
		add(actions("choose",
			button(core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefApprove}, "Approve", slack.StylePrimary),
			button(core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefDeny}, "Deny", slack.StyleDanger)))
	case core.KindForm:
		done, total := core.Progress(q)
		add(ctxBlock("progress", fmt.Sprintf("Answered %d/%d", done, total)))
		per := min(budgetItemMax, budgetItems/max(1, len(q.Items)))
		for i, it := range q.Items {
			add(section(fmt.Sprintf("item-%d", i), formItem(q, it, i, per), true))
			if _, answered := q.Answered(it.ID); answered {
				continue
			}
			var bs []*slack.ButtonBlockElement
			for j, o := range it.Options {
				label, style := o.Label, slack.StyleDefault
				if o.Recommended {
					label = cut(plain(o.Label, maxButtonText), maxButtonText-len(" (Recommended)")) + " (Recommended)"
					style = slack.StylePrimary
				}
				bs = append(bs, button(core.Ref{QuestionID: q.ID, Item: i, Action: core.RefOption, Option: j}, label, style))
			}
			add(actions(fmt.Sprintf("item-%d-choose", i), bs...))
		}
		add(ctxBlock("howto", "No option fits? Reply in this thread: your reply answers the first unanswered item."))
	default: // clarification
		add(ctxBlock("howto", "Reply in this thread to answer."))
	}
	add(actions("decline", button(core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefDecline}, "Decline: let the agent decide", slack.StyleDefault)))
	return Message{Text: fallback(q), Blocks: blocks}
}

// metaLine says who asked, for what, until when, and the question's id.
func metaLine(q *core.Question) string {
	parts := []string{"Asked by *" + esc(q.Agent, budgetLabel) + "*"}
	if q.Labels.Project != "" {
		parts = append(parts, "project *"+esc(q.Labels.Project, budgetLabel)+"*")
	}
	if q.Labels.Task != "" {
		parts = append(parts, "task *"+esc(q.Labels.Task, budgetLabel)+"*")
	}
	if q.Open() && !q.Deadline.IsZero() {
		parts = append(parts, "answer by "+q.Deadline.UTC().Format(timeLayout))
	}
	parts = append(parts, "`"+q.ID+"`")
	return strings.Join(parts, "  ·  ")
}

// approvalCall shows the gated tool call: its name, a bounded summary of
// its canonical arguments and the start of their digest.
func approvalCall(q *core.Question) string {
	if q.Call == nil {
		return "*Tool:* (missing)"
	}
	s := "*Tool:* `" + esc(q.Call.Tool, budgetLabel) + "`\n*Arguments:*\n" + code(string(q.Call.Arguments), budgetArgs)
	if d := q.Call.ArgumentsSHA256; len(d) >= 12 {
		s += "\nsha256 `" + d[:12] + "…`"
	}
	return s
}

// formItem is one form item: its question, its options with their
// descriptions and, once answered, the answer.
func formItem(q *core.Question, it core.FormItem, i, budget int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d. %s*", i+1, esc(it.Question, budget/3))
	perOpt := (budget - textLen(b.String())) / max(1, len(it.Options)+1)
	for _, o := range it.Options {
		line := "\n• *" + esc(o.Label, min(perOpt/2, core.MaxTitleLen)) + "*"
		if o.Recommended {
			line += " (Recommended)"
		}
		if o.Description != "" {
			line += " — " + esc(o.Description, max(0, perOpt-textLen(line)-3))
		}
		b.WriteString(line)
	}
	if a, ok := q.Answered(it.ID); ok {
		v := a.Text
		for _, o := range it.Options {
			if o.ID == a.OptionID {
				v = o.Label
			}
		}
		fmt.Fprintf(&b, "\n*Answered:* %s  (by %s, %s)", esc(v, perOpt), esc(core.DeciderLabel(a.Decider), budgetLabel),
			a.At.UTC().Format(timeLayout))
	}
	return b.String()
}

// outcome is a closed card's last section: who closed it, how and when,
// and what was chosen.
func outcome(q *core.Question) string {
	s := "*" + esc(core.OutcomeLine(q), maxSectionText/4) + "*"
	r := q.Resolution
	if q.State != core.StateAnswered || r == nil {
		return s
	}
	switch q.Kind {
	case core.KindDecision:
		s += "\nChosen: *" + esc(core.ChoiceLabel(q), core.MaxTitleLen) + "*"
	case core.KindApproval:
		s += "\nVerdict: *" + core.ChoiceLabel(q) + "*"
	case core.KindForm:
		s += "\n*Answers:*\n" + esc(core.ChoiceLabel(q), budgetAnswer)
	default:
		s += "\n*Answer:*\n" + esc(core.ChoiceLabel(q), budgetAnswer)
	}
	if r.Reason != "" && q.Kind != core.KindForm {
		s += "\nReason: " + esc(r.Reason, budgetAnswer/3)
	}
	return s
}

// fallback is the notification text: what the card is about in a line.
func fallback(q *core.Question) string {
	s := core.KindTitle(q.Kind) + ": " + textlimit.FirstLine(q.Text)
	if q.Reversibility == core.HardToReverse {
		s = "[" + core.HardToReverseMarker + "] " + s
	}
	if !q.Open() {
		s += " — " + core.OutcomeLine(q)
	}
	return esc(s, 300)
}

// Reminder renders a reminder of a still-open question. inThread is true
// when it is posted in the card's thread (the card is right above it);
// otherwise it names the question, since there is no card to point to.
func Reminder(q *core.Question, inThread bool) Message {
	s := "*" + core.ReminderHeading + "*"
	if !q.Deadline.IsZero() {
		s += " (answer by " + q.Deadline.UTC().Format(timeLayout) + ")"
	}
	if !inThread {
		s += "\n" + esc(core.KindTitle(q.Kind)+" from "+q.Agent+": "+textlimit.FirstLine(q.Text), 400) + "  `" + q.ID + "`"
		if q.Reversibility == core.HardToReverse {
			s += "  ·  *" + core.HardToReverseMarker + "*"
		}
	}
	return Message{
		Text:   esc(core.ReminderHeading+": "+textlimit.FirstLine(q.Text), 300),
		Blocks: []slack.Block{section("reminder", s, true)},
	}
}

// Digest renders "while you were away": counts, and the open questions by
// id and first line.
func Digest(d core.Digest) Message {
	head := fmt.Sprintf("*%s* (askbridge was away from %s to %s)\n%d asked  ·  %d closed  ·  %d still open", core.DigestHeading,
		d.From.UTC().Format(timeLayout), d.To.UTC().Format(timeLayout), len(d.Asked), len(d.Closed), len(d.Open))
	blocks := []slack.Block{section("digest", head, false)}
	if len(d.Open) > 0 {
		var b strings.Builder
		b.WriteString("*Still open:*")
		for i, q := range d.Open {
			if i == digestListed {
				fmt.Fprintf(&b, "\n…and %d more", len(d.Open)-digestListed)
				break
			}
			line := "\n• `" + q.ID + "` " + esc(textlimit.FirstLine(q.Text), 140)
			if q.Reversibility == core.HardToReverse {
				line += "  *" + core.HardToReverseMarker + "*"
			}
			b.WriteString(line)
		}
		blocks = append(blocks, section("digest-open", b.String(), true))
	}
	return Message{
		Text:   fmt.Sprintf("%s: %d asked, %d closed, %d still open", core.DigestHeading, len(d.Asked), len(d.Closed), len(d.Open)),
		Blocks: blocks,
	}
}

// Note is a private note to one person: a refusal or a hint.
func Note(text string) Message {
	return Message{Text: esc(text, maxFallback), Blocks: []slack.Block{section("note", esc(text, maxSectionText), true)}}
}

func section(id, mrkdwn string, verbatim bool) *slack.SectionBlock {
	return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, mrkdwn, false, verbatim), nil, nil, slack.SectionBlockOptionBlockID(id))
}

// sectionWith is a section with a button beside it; with no button (its
// ref would not encode) it is a plain section.
func sectionWith(id, mrkdwn string, b *slack.ButtonBlockElement) *slack.SectionBlock {
	var acc *slack.Accessory
	if b != nil {
		acc = slack.NewAccessory(b)
	}
	return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, mrkdwn, false, true), nil, acc, slack.SectionBlockOptionBlockID(id))
}

func ctxBlock(id, mrkdwn string) *slack.ContextBlock {
	return slack.NewContextBlock(id, slack.NewTextBlockObject(slack.MarkdownType, mrkdwn, false, false))
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

// button carries ref, encoded, as both its value and its action_id (refs
// are unique within a card, and nothing else may ride on a button). A ref
// that does not encode gets no button at all.
func button(ref core.Ref, label string, style slack.Style) *slack.ButtonBlockElement {
	v := ref.Encode()
	if v == "" {
		return nil
	}
	b := slack.NewButtonBlockElement(v, v, slack.NewTextBlockObject(slack.PlainTextType, plain(label, maxButtonText), false, false))
	if style != slack.StyleDefault {
		b.WithStyle(style)
	}
	return b
}

package slack

import (
	"encoding/json"
	"fmt"
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

// Card renders a card.Card: a question's first post (with its markers)
// and every later edit. An open question gets its buttons, each carrying
// only an encoded core.Ref; a closed one shows who closed it, how and
// when, and no buttons.
//
// Slack takes free text as a reply in the card's thread, so an action
// that collects text (a clarification's answer, a form item's own answer)
// draws no button: the card says to reply in the thread instead.
//
// Whatever the card, its blocks stay within maxBlocksJSON, open and
// closed alike: a card Slack refuses is never posted, and an edit it
// refuses leaves a closed question's buttons live. A batch's calls share
// one budget for their arguments; a card still too long (a batch of many
// calls, each with its buttons) keeps the buttons of as many of its
// undecided calls as fit, in order, and says how to decide the rest (as
// Discord does when its rows run out); and past that, a card of absurd
// texts is rendered again with every text budget halved until it fits.
func Card(c card.Card) Message {
	var m Message
	undecided := undecidedCalls(c)
	for div := 1; div <= maxDiv; div *= 2 {
		if m = render(c, fit{div: div, calls: undecided}); blocksLen(m.Blocks) <= maxBlocksJSON {
			return m
		}
		// The most calls whose buttons fit: fewer buttons never take
		// more room. render(c, fit{div, hi}) is too long; lo fits, once
		// lo >= 0.
		lo, hi := -1, undecided
		for lo+1 < hi {
			mid := (lo + hi) / 2
			if blocksLen(render(c, fit{div: div, calls: mid}).Blocks) <= maxBlocksJSON {
				lo = mid
			} else {
				hi = mid
			}
		}
		if lo >= 0 {
			return render(c, fit{div: div, calls: lo})
		}
	}
	return m // cut as far as it goes
}

// maxDiv is the most a card's text budgets are divided by to fit.
const maxDiv = 64

// fit is how much of a card a rendering keeps: its text budgets divided
// by div, and the buttons of the first calls undecided calls of a batch.
type fit struct {
	div   int
	calls int
}

// b is the text budget n as f keeps it: never below minBudget (nor
// above n).
func (f fit) b(n int) int { return max(n/f.div, min(n, minBudget)) }

// who is the budget of a name that says who decided or closed something
// (law 12): kept whole until only absurd texts are left to cut.
func (f fit) who(n int) int {
	if f.div < whoDiv {
		return n
	}
	return f.b(n)
}

const (
	minBudget = 24 // the least a text budget is cut to
	whoDiv    = 8  // from this div on, names are cut too
)

// undecidedCalls counts a batch card's calls that still have buttons.
func undecidedCalls(c card.Card) int {
	if c.Progress == nil {
		return 0 // not a batch
	}
	n := 0
	for _, s := range c.Sections {
		if s.Kind == card.SectionCall && len(drawn(s.Actions)) > 0 {
			n++
		}
	}
	return n
}

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
	// decision's options share theirs.
	perCall := f.b(min(budgetArgs, budgetCalls/max(1, calls)))
	shown := false  // the form's progress, above its first item
	buttoned := 0   // undecided calls drawn with their buttons
	unbuttoned := 0 // the first undecided call drawn without them, numbered
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
			if c.Progress != nil { // one call of a batch, numbered
				add(section(fmt.Sprintf("call-%d", s.Index), fmt.Sprintf("*%d.* ", s.Index+1)+approvalCall(c.QuestionID, s, f, perCall)))
				bs := drawn(s.Actions)
				if len(bs) == 0 {
					break
				}
				if buttoned == f.calls {
					if unbuttoned == 0 {
						unbuttoned = s.Index + 1
					}
					break
				}
				buttoned++
				add(actions(fmt.Sprintf("call-%d-choose", s.Index), bs...))
				break
			}
			add(section("call", approvalCall(c.QuestionID, s, f, perCall)))
			add(actions("choose", drawn(s.Actions)...))
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
	if unbuttoned > 0 {
		add(ctxBlock("calls-unbuttoned", fmt.Sprintf("The buttons of call %d and of the undecided calls after it do not fit in one Slack message: "+
			"decide those with *%s* or *%s*, or decide the calls above first and their buttons appear here.", unbuttoned, card.LabelApproveAll, card.LabelDenyAll)))
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
	add(actions("decline", drawn(c.Actions)...))
	return Message{Text: fallback(c), Blocks: blocks}
}

// blocksLen is the size of blocks' JSON as Slack counts it towards
// msg_blocks_too_long: without Go's HTML escaping, in UTF-16 units.
func blocksLen(blocks []slack.Block) int {
	raw, err := json.Marshal(blocks)
	if err != nil {
		return 0
	}
	// slack-go's block types marshal themselves with HTML escaping.
	return textLen(htmlUnescaper.Replace(string(raw)))
}

var htmlUnescaper = strings.NewReplacer(`\u0026`, "&", `\u003c`, "<", `\u003e`, ">")

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

// approvalCall shows the gated tool call of question id: its name, its
// arguments within args (their middle giving way: code) and the start
// of their hash.
func approvalCall(id core.QuestionID, s card.Section, f fit, args int) string {
	out := "*Tool:* " + codeSpan(s.Title, f.b(budgetLabel)) + "\n*Arguments:*\n" + code(s.Body, args, id)
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

package teams

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/askbridge/askbridge/adapters/internal/textlimit"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// Adaptive Card rendering. Every text people or agents wrote goes into a
// RichTextBlock's TextRun, which Teams shows as plain text (a TextBlock
// would read it as Markdown, so "[x](http://…)" in a question would become
// a link); only server-made words use TextBlocks.
//
// Budgets, in runes, keep the worst card (every field at core's maximum)
// well inside Teams' ~28 KB limit on a message; render_test.go checks it.
const (
	budgetQuestion = 2000
	budgetContext  = 1000
	budgetOption   = 1200
	budgetArgs     = 3000
	budgetItem     = 1200
	budgetAnswer   = 2000
	budgetLabel    = 128
	budgetTitle    = 200 // an action's title
	digestListed   = 15
	// MaxCardBytes is the size no rendered card may reach: Teams refuses
	// a message over about 28 KB, and the activity around the card needs
	// room too.
	MaxCardBytes = 24 * 1024
)

// CardSchemaVersion is the Adaptive Cards version the cards declare:
// 1.5 is what Teams renders on desktop, web and mobile, and has
// Action.Execute.
const CardSchemaVersion = "1.5"

// Verb is every Action.Execute's verb; the data carries the ref.
const Verb = "askbridge"

// DataRef and DataInput are the keys of an action's data: the encoded
// core.Ref, and the id of the input whose text goes with it.
const (
	DataRef   = "askbridgeRef"
	DataInput = "askbridgeInput"
)

const timeLayout = "2006-01-02 15:04 UTC"

// Element is one Adaptive Card element or action, as JSON.
type Element = map[string]any

// AdaptiveCard is a card as sent, in an attachment of
// application/vnd.microsoft.card.adaptive.
type AdaptiveCard struct {
	Type    string    `json:"type"`
	Schema  string    `json:"$schema"`
	Version string    `json:"version"`
	Body    []Element `json:"body"`
	// MSTeams widens the card to the message's full width.
	MSTeams map[string]any `json:"msteams,omitempty"`
}

func cut(s string, max int) string { return textlimit.Runes.Cut(textlimit.Clean(s), max) }

// plain is people's text as a RichTextBlock: shown literally.
func plain(s string, max int, opts ...func(Element)) Element {
	return Element{"type": "RichTextBlock", "inlines": []Element{textRun(cut(s, max), opts...)}}
}

// textRun is s as a TextRun, which Teams never reads as Markdown.
func textRun(s string, opts ...func(Element)) Element {
	run := Element{"type": "TextRun", "text": s}
	for _, o := range opts {
		o(run)
	}
	return run
}

func bold(e Element)   { e["weight"] = "bolder" }
func subtle(e Element) { e["isSubtle"] = true }
func mono(e Element)   { e["fontType"] = "monospace" }

// words is server-made text (labels, times, ids): a wrapped TextBlock.
func words(s string, opts ...func(Element)) Element {
	e := Element{"type": "TextBlock", "text": s, "wrap": true}
	for _, o := range opts {
		o(e)
	}
	return e
}

func newCard(body []Element) AdaptiveCard {
	return AdaptiveCard{Type: "AdaptiveCard", Schema: "http://adaptivecards.io/schemas/adaptive-card.json",
		Version: CardSchemaVersion, Body: body, MSTeams: map[string]any{"width": "Full"}}
}

// Card renders a card.Card: a question's first post and every later
// edit. Each action is an Action.Execute (Teams' universal action: the
// click comes as an invoke the bot answers privately, on every client
// that has it) with an Action.Submit fallback for clients that do not.
// An action that takes text has its own input right above it: the
// answer, a deny's optional reason, or the arguments as JSON, prefilled.
//
// threaded is whether a reply in the card's thread answers it, as in a
// channel (replyHint).
//
// A card that would pass MaxCardBytes (a batch of many calls with long
// arguments, say) is rendered again with every text budget halved, and
// past an eighth without the fallbacks, until it fits.
func Card(c card.Card, threaded bool) AdaptiveCard {
	for div := 1; ; div *= 2 {
		card := render(c, div, threaded)
		if div >= 64 || Size(card) <= MaxCardBytes {
			return card
		}
	}
}

// Size is a card's JSON length as sent.
func Size(card AdaptiveCard) int {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(card)
	return buf.Len()
}

// fit is how much of a card render keeps: text budgets divided by div;
// Action.Submit fallbacks while div < 8; and while div < 16, the inputs
// of "Edit and approve", whose prefilled arguments cannot be cut (past
// that, a card says where to edit instead).
type fit struct {
	div       int
	fallbacks bool
	edits     bool
}

func (f fit) b(n int) int { return max(n/f.div, 24) }

// render is Card within f.
func render(c card.Card, div int, threaded bool) AdaptiveCard {
	r := &renderer{c: c, f: fit{div: div, fallbacks: div < 8, edits: div < 16}}
	b := r.f.b
	r.add(heading(c)...)
	r.add(metaLine(c))
	r.add(plain(c.Text, b(budgetQuestion), func(e Element) { e["size"] = "medium" }))
	for _, s := range c.Sections {
		r.section(s)
		r.actions(s.Actions)
	}
	if c.Progress != nil && !r.shown && c.Outcome == nil {
		r.add(words(c.Progress.String(), subtle))
	}
	if c.Tally != nil {
		r.add(plain(strings.Join(c.Tally.Lines, "\n"), 600, subtle))
	}
	if c.Outcome != nil {
		r.add(outcome(c, b)...)
		return newCard(r.body)
	}
	if c.TakesText() {
		r.add(words(replyHint(c, threaded), subtle, func(e Element) { e["size"] = "small" }))
	}
	r.actions(c.Actions)
	if r.dropped {
		r.add(words(TooLongToEdit, subtle))
	}
	return newCard(r.body)
}

// renderer is one rendering of a card: the body so far, and what the
// later parts depend on of the earlier.
type renderer struct {
	c       card.Card
	f       fit
	body    []Element
	inputs  int  // inputs so far, each needing an id of its own
	shown   bool // the form's progress is shown (before its first item)
	dropped bool // an "Edit and approve" did not fit (TooLongToEdit)
}

func (r *renderer) add(e ...Element) { r.body = append(r.body, e...) }

// actions adds as, without the edits of arguments when the card must be
// cut so far that they do not fit.
func (r *renderer) actions(as []card.Action) {
	if !r.f.edits {
		kept := as[:0:0]
		for _, a := range as {
			if a.Input == card.InputArguments {
				r.dropped = true
				continue
			}
			kept = append(kept, a)
		}
		as = kept
	}
	r.add(actionSet(as, &r.inputs, r.f)...)
}

// section adds one of the card's sections, by its kind.
func (r *renderer) section(s card.Section) {
	b := r.f.b
	switch s.Kind {
	case card.SectionContext:
		r.add(words("Context", bold), plain(s.Body, b(budgetContext)))
	case card.SectionOption:
		title := fmt.Sprintf("%d. %s", s.Index+1, cut(s.Title, b(core.MaxTitleLen)))
		if s.Recommended {
			title += card.RecommendedNote
		}
		r.add(plain(title, core.MaxTitleLen+40, bold), plain(s.Body, b(budgetOption)))
	case card.SectionCall:
		r.call(s)
	case card.SectionItem:
		r.item(s)
	default:
		r.add(plain(s.Title, b(core.MaxTitleLen), bold), plain(s.Body, b(budgetContext)))
	}
}

// call adds a tool call of an approval or a batch: its tool, arguments,
// digest and, in a batch, its decision. Arguments too long for their
// budget keep their head and their tail around a line that counts what
// was left out (card.CutMiddle, in runes as the budgets count): Approve
// approves the whole call, so its end must show.
func (r *renderer) call(s card.Section) {
	b := r.f.b
	prefix := ""
	if r.c.Progress != nil {
		prefix = fmt.Sprintf("%d. ", s.Index+1)
	}
	r.add(plain(prefix+"Tool: "+cut(s.Title, b(budgetLabel)), budgetLabel+16, bold))
	args := b(budgetArgs)
	r.add(words("Arguments", subtle), plain(card.CutMiddle(s.Body, args, r.c.QuestionID, nil), args, mono))
	if s.Hash != "" {
		r.add(words("sha256 "+s.Hash+"…", subtle, func(e Element) { e["size"] = "small" }))
	}
	if a := s.Answer; a != nil {
		r.add(plain(fmt.Sprintf("Decided: %s (by %s, %s)", cut(a.Text, b(budgetLabel)), cut(a.By, b(budgetLabel)), a.At.UTC().Format(timeLayout)), 400))
	}
}

// item adds a form's item: the form's progress before the first, the
// item's choices and its answer.
func (r *renderer) item(s card.Section) {
	b := r.f.b
	if r.c.Progress != nil && !r.shown {
		r.add(words(r.c.Progress.String(), subtle))
		r.shown = true
	}
	r.add(plain(fmt.Sprintf("%d. %s", s.Index+1, cut(s.Title, b(budgetItem/3))), b(budgetItem), bold))
	for _, o := range s.Choices {
		line := "• " + cut(o.Label, b(core.MaxTitleLen))
		if o.Recommended {
			line += card.RecommendedNote
		}
		if o.Description != "" {
			line += " — " + cut(o.Description, b(budgetItem/4))
		}
		r.add(plain(line, b(budgetItem)))
	}
	if a := s.Answer; a != nil {
		r.add(plain(fmt.Sprintf("Answered: %s (by %s, %s)", cut(a.Text, b(budgetAnswer/4)), cut(a.By, b(budgetLabel)), a.At.UTC().Format(timeLayout)), b(budgetAnswer)))
	}
}

// TooLongToEdit replaces "Edit and approve" on a card whose arguments
// are too long to carry in Teams' inputs.
var TooLongToEdit = card.TooLongToEdit("Teams")

// heading is the card's first line, with its markers: those about the
// choice itself in the attention colour.
func heading(c card.Card) []Element {
	out := []Element{words(c.Heading, bold, func(e Element) { e["size"] = "large" })}
	var loud, quiet []string
	for _, m := range c.Markers {
		if m.Warning() {
			loud = append(loud, m.Text())
		} else {
			quiet = append(quiet, m.Text())
		}
	}
	if len(loud) > 0 {
		out = append(out, words(strings.Join(loud, " · "), bold, func(e Element) { e["color"] = "attention"; e["spacing"] = "none" }))
	}
	if len(quiet) > 0 {
		out = append(out, words(strings.Join(quiet, " · "), subtle, func(e Element) { e["spacing"] = "none" }))
	}
	return out
}

// metaLine says who asked, for what, until when, and the question's id.
// Agent, run and labels are the agent's words, so they go in TextRuns of
// their own, which Teams never reads as Markdown: a TextBlock would (a
// code span is not Markdown Adaptive Cards know), and an agent named
// "[Approve here](https://...)" would show a link.
func metaLine(c card.Card) Element {
	m := c.Meta
	var runs []Element
	small := func(e Element) { e["size"] = "small" }
	run := func(s string, label bool) {
		if label { // the agent's words, on one line, bounded
			runs = append(runs, textRun(cut(textlimit.OneLine(s), budgetLabel), subtle, small, mono))
		} else {
			runs = append(runs, textRun(s, subtle, small))
		}
	}
	run("Asked by ", false)
	run(string(m.Agent), true)
	if m.RunID != "" {
		run(" · run ", false)
		run(string(m.RunID), true)
	}
	if m.Labels.Project != "" {
		run(" · project ", false)
		run(m.Labels.Project, true)
	}
	if m.Labels.Task != "" {
		run(" · task ", false)
		run(m.Labels.Task, true)
	}
	if !m.Deadline.IsZero() {
		run(" · answer by "+m.Deadline.UTC().Format(timeLayout), false)
	}
	run(" · ", false)
	run(string(c.QuestionID), true)
	return Element{"type": "RichTextBlock", "inlines": runs, "spacing": "none"}
}

// outcome is a closed card's last part: who closed it, how and when, and
// what was chosen.
func outcome(c card.Card, b func(int) int) []Element {
	o := c.Outcome
	out := []Element{plain(o.Line, 600, bold, func(e Element) { e["color"] = "accent" })}
	if o.Label != "" {
		out = append(out, words(o.Label, bold), plain(o.Choice, b(budgetAnswer)))
	}
	if o.Reason != "" {
		out = append(out, plain("Reason: "+o.Reason, b(budgetAnswer/3)))
	}
	out[0]["separator"] = true
	return out
}

// InputID is the id of the n-th input on a card.
func InputID(n int) string { return fmt.Sprintf("askbridgeText%d", n) }

// actionSet renders as as an ActionSet, each action that takes text
// preceded by its input (numbered through *inputs, so ids are unique on
// the card), with Action.Submit fallbacks or without.
func actionSet(as []card.Action, inputs *int, f fit) []Element {
	if len(as) == 0 {
		return nil
	}
	var out []Element
	var acts []Element
	for _, a := range as {
		in := ""
		if a.Input != card.InputNone {
			in = InputID(*inputs)
			*inputs++
			out = append(out, input(a, in))
		}
		acts = append(acts, action(a, in, f))
	}
	return append(out, Element{"type": "ActionSet", "actions": acts})
}

// input is the text field an action reads: required words, an optional
// reason, or the arguments as JSON starting from the asked ones.
func input(a card.Action, id string) Element {
	e := Element{"type": "Input.Text", "id": id, "label": cut(a.Head(), budgetTitle)}
	switch a.Input {
	case card.InputRequired:
		e["placeholder"] = "Your answer"
		e["isMultiline"] = true
	case card.InputOptional:
		e["placeholder"] = "Reason (optional)"
	case card.InputArguments:
		e["label"] = "Arguments (JSON), for " + cut(a.Head(), budgetTitle)
		e["isMultiline"] = true
		e["value"] = a.Prefill
	}
	return e
}

// action is one button: Action.Execute carrying the ref (and its input's
// id), falling back to Action.Submit with the same data.
func action(a card.Action, input string, f fit) Element {
	data := map[string]string{DataRef: a.Ref.Encode()}
	if input != "" {
		data[DataInput] = input
	}
	title := textlimit.Runes.CutKeeping(a.Head(), a.Keep, f.b(budgetTitle))
	style := ""
	switch a.Style {
	case card.StylePrimary:
		style = "positive"
	case card.StyleDanger:
		style = "destructive"
	}
	e := Element{"type": "Action.Execute", "title": title, "verb": Verb, "data": data}
	if f.fallbacks {
		submit := Element{"type": "Action.Submit", "title": title, "data": data}
		if style != "" {
			submit["style"] = style
		}
		e["fallback"] = submit
	}
	if style != "" {
		e["style"] = style
	}
	return e
}

// Digest renders "while you were away": counts, and the open questions
// by id and first line.
func Digest(d core.Digest) AdaptiveCard {
	body := []Element{
		words(card.DigestHeading, bold),
		words(fmt.Sprintf("askbridge was away from %s to %s", d.From.UTC().Format(timeLayout), d.To.UTC().Format(timeLayout)), subtle),
		words(fmt.Sprintf("%s asked · %s closed · %s still open",
			card.DigestCount(len(d.Asked), d.AskedMore), card.DigestCount(len(d.Closed), d.ClosedMore), card.DigestCount(len(d.Open), d.OpenMore))),
	}
	for i, q := range d.Open {
		if i == digestListed {
			break
		}
		line := string(q.ID) + " " + textlimit.FirstLine(q.Text)
		if q.Reversibility == core.HardToReverse {
			line += " [" + card.HardToReverseMarker + "]"
		}
		body = append(body, plain("• "+line, 200))
	}
	if more := card.DigestNotListed(max(len(d.Open)-digestListed, 0), d.OpenMore); more != "" {
		body = append(body, words(more, subtle))
	}
	return newCard(body)
}

// Summary is the card's one-line text for notifications and clients that
// show no cards.
func Summary(c card.Card) string {
	s := c.Heading + ": " + textlimit.FirstLine(c.Text)
	for _, m := range c.Markers {
		if m.Warning() {
			s = "[" + m.Text() + "] " + s
		}
	}
	if c.Outcome != nil {
		s += " — " + c.Outcome.Line
	}
	return cut(s, 300)
}

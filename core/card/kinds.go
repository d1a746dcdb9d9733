package card

import (
	"fmt"
	"strings"

	"github.com/askbridge/askbridge/core"
)

// kindCard is one kind's part of a card and of the words around it: every
// card wording that differs by kind, in one value. The rest of a card
// (heading, markers, meta, context, the decline button, the outcome line
// of who or what closed it) is shared. A kind of core's (core.Shapes)
// missing here fails TestEveryKindHasACard.
type kindCard struct {
	// body adds the kind's sections, progress and own actions (before
	// the shared Decline) to c, the card of q, open or closed; q's
	// names are cleaned (New reads it through named), so its parts are
	// named with partBy.
	body func(c *Card, q *core.Question, open bool)
	// label heads what an answered card shows was chosen (Outcome.Label);
	// reasonless leaves the resolution's reason off the outcome.
	label      string
	reasonless bool
	// choice is what was chosen, for people (ChoiceLabel); nil for the
	// resolution's answer.
	choice func(q *core.Question) string
	// parts words a kind answered part by part; nil for one answered as
	// a whole.
	parts *partWords
	// note is the private note after a click that counted on one of the
	// kind's own buttons (RecordedNote), "" to leave it to the shared
	// notes. A kind answered in parts words every click by its part
	// before anything shared; the others' notes come after a vote's and
	// the approval verdicts'.
	note func(q *core.Question, r core.Ref) string
}

// partWords are how a kind's parts are named in its outcome lines.
type partWords struct {
	noun, done string // "calls", "decided": "after 1 of 3 calls had been decided"
	each       string // "Decided call by call"
	// escalated marks the escalated card of a question some of whose
	// parts were answered (escalatedMarker).
	escalated Marker
}

// kindCards is every kind's card.
var kindCards = map[core.Shape]kindCard{
	core.ShapeClarification: {body: clarificationBody, label: "Answer"},
	core.ShapeDecision:      {body: decisionBody, label: "Chosen", choice: decisionChoice, note: decisionNote},
	core.ShapeApproval:      {body: approvalBody, label: "Verdict", choice: approvalChoice},
	core.ShapeBatch: {body: batchBody, label: "Verdict", choice: batchChoice, note: batchNote,
		parts: &partWords{noun: "calls", done: "decided", each: "Decided call by call", escalated: MarkerEscalatedCalls}},
	core.ShapeForm: {body: formBody, label: "Answers", reasonless: true, choice: formChoice, note: formNote,
		parts: &partWords{noun: "items", done: "answered", each: "Answered item by item", escalated: MarkerEscalatedItems}},
}

// kindCardOf is q's kind's card; the zero kindCard (no sections, the
// shared words) for a kind with none.
func kindCardOf(q *core.Question) kindCard { return kindCards[q.Shape()] }

func refOf(q *core.Question, a core.RefAction, item, option int) core.Ref {
	return core.Ref{QuestionID: q.ID, Item: item, Action: a, Option: option}
}

func clarificationBody(c *Card, q *core.Question, open bool) {
	if open {
		c.Actions = append(c.Actions, Action{Label: LabelAnswer, Ref: refOf(q, core.RefText, -1, 0), Style: StylePrimary, Input: InputRequired})
	}
}

func decisionBody(c *Card, q *core.Question, open bool) {
	if !open {
		return
	}
	for i, o := range q.Options {
		s := Section{Kind: SectionOption, Index: i, Title: o.Title, Body: o.Writeup, Recommended: o.Recommended}
		// Numbered as on the card, so that two titles alike up to where
		// a platform cuts a label still give buttons told apart.
		label := fmt.Sprintf("%d. %s", i+1, AgentLabel(o.Title))
		s.Actions = []Action{choice(label, o.Recommended, refOf(q, core.RefOption, -1, i))}
		c.Sections = append(c.Sections, s)
	}
}

func decisionChoice(q *core.Question) string {
	if o, ok := q.Option(q.Resolution.OptionID); ok {
		return o.Title
	}
	return q.Resolution.Answer
}

func decisionNote(q *core.Question, r core.Ref) string {
	if r.Action == core.RefOption && r.Option < len(q.Options) {
		return "Recorded: " + q.Options[r.Option].Title
	}
	return ""
}

func batchBody(c *Card, q *core.Question, open bool) {
	c.Sections, c.Progress = append(c.Sections, batchSections(q)...), batchProgress(q)
	if open {
		c.Actions = append(c.Actions, batchAllActions(q)...)
	}
}

func formBody(c *Card, q *core.Question, open bool) {
	c.Progress = &FormProgress{Done: len(q.Answers), Total: len(q.Items)}
	if !open {
		return
	}
	for i, it := range q.Items {
		s := Section{Kind: SectionItem, Index: i, Title: it.Question}
		for _, o := range it.Options {
			s.Choices = append(s.Choices, Choice{Label: o.Label, Description: o.Description, Recommended: o.Recommended})
		}
		if a, ok := q.Answered(it.ID); ok {
			s.Answer = &ItemAnswered{Text: it.Shown(a.OptionID, a.Text), Own: a.OptionID == "", By: partBy(a),
				Surface: a.Surface(), At: a.At}
		} else {
			// Rows of buttons have no headings on some platforms, so
			// a label names its item when there are several.
			num := ""
			if len(q.Items) > 1 {
				num = fmt.Sprintf("%d. ", i+1)
			}
			for j, o := range it.Options {
				s.Actions = append(s.Actions, choice(num+AgentLabel(o.Label), o.Recommended, refOf(q, core.RefOption, i, j)))
			}
			s.Actions = append(s.Actions, Action{Label: num + LabelSomethingElse, Ref: refOf(q, core.RefText, i, 0),
				Style: StyleDefault, Input: InputRequired})
		}
		c.Sections = append(c.Sections, s)
	}
}

func formChoice(q *core.Question) string {
	var lines []string
	for _, a := range q.Answers {
		it, _ := q.Item(a.ItemID)
		lines = append(lines, fmt.Sprintf("%s: %s", it.Question, it.Shown(a.OptionID, a.Text)))
	}
	return strings.Join(lines, "\n")
}

func formNote(q *core.Question, r core.Ref) string {
	if r.Item < 0 || r.Item >= len(q.Items) {
		return ""
	}
	it := q.Items[r.Item]
	p := FormProgress{Done: len(q.Answers), Total: len(q.Items)}
	switch r.Action {
	case core.RefText:
		return fmt.Sprintf("Recorded (%s): your own answer to %s", p, it.Question)
	case core.RefOption:
		label := ""
		if r.Option < len(it.Options) {
			label = it.Options[r.Option].Label
		}
		return fmt.Sprintf("Recorded (%s): %s → %s", p, it.Question, label)
	}
	return ""
}

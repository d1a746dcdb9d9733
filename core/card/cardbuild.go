package card

import (
	"strings"

	"github.com/askbridge/askbridge/core"
)

// hashShown is how much of an argument hash a card shows.
const hashShown = 12

// New is q's card as it stands, for the card m (as posted: its kind
// and repeat mark decide the markers, so every edit keeps them).
func New(q *core.Question, m core.MessageRef) Card {
	q = named(q) // every name on the card as cards name people (names.go)
	as := m.Kind
	if as == "" {
		as = postedAs(m)
	}
	c := Card{
		QuestionID: q.ID, Kind: q.Kind, State: q.State, As: as,
		Heading: KindTitle(q.Kind), Markers: markers(q, as, m.Repeat), Meta: meta(q), Text: q.Text,
		Tally: core.TallyOf(q),
	}
	if q.Context != "" {
		c.Sections = append(c.Sections, Section{Kind: SectionContext, Body: q.Context})
	}
	open := q.Open()
	if k := kindCardOf(q); k.body != nil {
		k.body(&c, q, open)
	}
	if q.Declinable() {
		c.Actions = append(c.Actions, Action{Label: LabelDecline, Ref: refOf(q, core.RefDecline, -1, 0), Style: StyleDefault})
	}
	if !open {
		c.Outcome = outcome(q)
	}
	return c
}

// NewReminder is the reminder of a still-open q for room on surface: the
// heading and markers of its card, what is asked and by when, and the
// card it reminds of when that room holds one. It carries no buttons:
// only cards are edited when the question closes.
func NewReminder(q *core.Question, surface core.Surface, room string) Card {
	c := Card{
		QuestionID: q.ID, Kind: q.Kind, State: q.State, As: core.DeliverRemind,
		Heading: KindTitle(q.Kind), Markers: markers(q, core.DeliverRemind, false), Meta: meta(q), Text: q.Text,
	}
	for i := range q.Messages {
		if m := q.Messages[i]; m.Surface == surface && m.Room == room {
			c.ReplyTo = &m
		}
	}
	return c
}

// Callers names whom a reminder calls on: core.Service does, by its
// routes and people (CallOn).
type Callers interface {
	CallOn(q *core.Question, surface core.Surface) []core.Mention
}

// Reminder is the reminder of a still-open q for room on surface
// (NewReminder), calling on whoever there may decide and has not acted
// yet, as by names them.
func Reminder(by Callers, q *core.Question, surface core.Surface, room string) Card {
	c := NewReminder(q, surface, room)
	c.Mentions = by.CallOn(q, surface)
	return c
}

// postedAs reads what a card recorded before cards stored their kind was
// posted as: the delivery key, which core wrote, says whether it was an
// escalation (roomDeliveries' purpose). Cards recorded since carry Kind.
func postedAs(m core.MessageRef) core.DeliveryKind {
	if strings.Contains(m.Delivery, ":escalate:") {
		return core.DeliverEscalate
	}
	return core.DeliverPost
}

func markers(q *core.Question, as core.DeliveryKind, repeat bool) []Marker {
	var ms []Marker
	if as == core.DeliverRemind {
		ms = append(ms, MarkerReminder)
	}
	switch q.Reversibility {
	case core.HardToReverse:
		ms = append(ms, MarkerHardToReverse)
	case core.Unclassified, "":
		ms = append(ms, MarkerUnclassified)
	}
	if as == core.DeliverEscalate {
		ms = append(ms, escalatedMarker(q))
	}
	if repeat {
		ms = append(ms, MarkerRepeat)
	}
	return ms
}

// escalatedMarker is q's escalated card's marker: nobody answered, or,
// once anything is recorded, what was missing (the votes, or some of its
// parts). Whatever was recorded after the escalation, both are true of
// the moment it escalated.
func escalatedMarker(q *core.Question) Marker {
	switch p := kindCardOf(q).parts; {
	case len(q.Answers) > 0 && p != nil:
		return p.escalated
	case len(q.Votes) > 0:
		return MarkerEscalatedVotes
	}
	return MarkerEscalated
}

func meta(q *core.Question) Meta {
	m := Meta{Agent: q.Agent, RunID: q.RunID, Labels: q.Labels, Asked: q.CreatedAt}
	if q.Open() {
		m.Deadline = q.Deadline
	}
	return m
}

func choice(label string, recommended bool, r core.Ref) Action {
	a := Action{Label: label, Ref: r, Style: StyleDefault}
	if recommended {
		a.Label, a.Keep, a.Style = label+RecommendedNote, RecommendedNote, StylePrimary
	}
	return a
}

func outcome(q *core.Question) *Outcome {
	r := q.Resolution
	if r == nil {
		return &Outcome{State: q.State}
	}
	o := &Outcome{State: q.State, Closer: core.CloserOf(q), At: r.At, Line: outcomeLine(q)}
	if d, ok := closingPerson(q); ok {
		o.By, o.Surface = core.DeciderLabel(d), d.Surface
	}
	if q.State != core.StateAnswered {
		if q.Kind == core.KindForm && len(q.Answers) > 0 {
			// Closed unfinished: the agent resumes with the items
			// answered before the close, so the card keeps them too.
			o.Label, o.Choice = LabelAnsweredBefore, formChoice(q)
		}
		return o
	}
	k := kindCardOf(q)
	o.Choice, o.Reason, o.Label = ChoiceLabel(q), r.Reason, k.label
	if k.reasonless {
		o.Reason = ""
	}
	return o
}

package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Card is the platform-neutral view of one message about a question, at
// one moment: a card as posted and as every later edit shows it, or a
// reminder. Core builds it once (NewCard, NewReminder); each chat adapter
// only renders it in its platform's markup, so the same question shows
// the same heading, markers, sections, actions and outcome everywhere.
//
// Texts are as people and agents wrote them: untrusted, neither escaped
// nor cut. Escaping and cutting to the platform's limits is the
// renderer's one job.
//
// The shape is meant to grow without reshaping renderers: a new kind of
// body part is a new SectionKind (a renderer that does not know one shows
// its Title and Body), a new flag is a new Marker, and a new answer is a
// new Action on a section or on the card.
type Card struct {
	QuestionID string
	Kind       Kind
	State      State
	// As is what this message is: DeliverPost or DeliverEscalate for a
	// card, DeliverRemind for a reminder.
	As DeliveryKind
	// Heading is the card's first words (KindTitle).
	Heading string
	// Markers are shown beside the heading, in order.
	Markers []Marker
	Meta    Meta
	// Text is the question itself.
	Text string
	// Sections are the body, in order: the context, then the options, the
	// tool call or the form items. A closed card keeps the context and an
	// approval's call (what was approved matters afterwards); the choices
	// give way to the outcome.
	Sections []Section
	// Progress counts a form's answered items; nil for other kinds.
	Progress *FormProgress
	// Actions are the card's own buttons, after those of its sections:
	// decline on every open question, and a clarification's answer.
	// A closed card has none, anywhere.
	Actions []Action
	// Outcome is set once the question is closed.
	Outcome *CardOutcome
	// ReplyTo is, on a reminder, the card in the same room it reminds of
	// (the latest one), or nil when that room holds none.
	ReplyTo *MessageRef
}

// Marker is a flag shown beside a card's heading.
type Marker string

const (
	MarkerHardToReverse Marker = "hard_to_reverse"
	MarkerUnclassified  Marker = "unclassified"
	MarkerEscalated     Marker = "escalated"
	MarkerReminder      Marker = "reminder"
	MarkerRepeat        Marker = "posted_again"
)

// Text is the marker's wording, the same on every surface.
func (m Marker) Text() string {
	switch m {
	case MarkerHardToReverse:
		return HardToReverseMarker
	case MarkerUnclassified:
		return UnclassifiedMarker
	case MarkerEscalated:
		return EscalatedMarker
	case MarkerReminder:
		return ReminderHeading
	case MarkerRepeat:
		return RepeatMarker
	}
	return string(m)
}

// Warning reports whether the marker warns about the choice itself (shown
// loud), rather than about how the message came (shown quiet).
func (m Marker) Warning() bool { return m == MarkerHardToReverse || m == MarkerUnclassified }

// Meta is who asked, in what context, and until when.
type Meta struct {
	Agent  string
	RunID  string
	Labels Labels
	Asked  time.Time
	// Deadline is when the question times out; zero once it is closed.
	Deadline time.Time
}

// SectionKind names a part of a card's body.
type SectionKind string

const (
	SectionContext SectionKind = "context" // Body: the asker's context
	SectionOption  SectionKind = "option"  // one decision option: Title, Body (its write-up), Recommended
	SectionCall    SectionKind = "call"    // an approval's tool call: Title (the tool), Body (arguments, indented JSON), Digest
	SectionItem    SectionKind = "item"    // one form item: Title (its question), Choices, Answer once answered
)

// Section is one part of a card's body. Which fields are set depends on
// Kind (see the SectionKind constants); Title and Body are what a renderer
// that does not know the kind shows.
type Section struct {
	Kind SectionKind
	// Index is the option's or item's position; cards number them
	// Index+1.
	Index       int
	Title       string
	Body        string
	Recommended bool
	// Digest is the start of the call's argument digest (sha256, hex),
	// enough to compare by eye; "" when there is none.
	Digest  string
	Choices []Choice
	Answer  *ItemAnswered
	// Actions are the buttons that belong to this section: an option's
	// pick, an approval's verdicts, an unanswered item's choices and its
	// free-text answer.
	Actions []Action
}

// Choice is one option of a form item.
type Choice struct {
	Label       string
	Description string
	Recommended bool
}

// ItemAnswered is a form item's recorded answer.
type ItemAnswered struct {
	// Text is the chosen option's label, or the free text.
	Text string
	// Own is true for a free-text answer.
	Own     bool
	By      string // DeciderLabel of who answered
	Surface Surface
	At      time.Time
}

// FormProgress is how many of a form's items are answered.
type FormProgress struct{ Done, Total int }

// String is the progress as every card words it.
func (p FormProgress) String() string { return fmt.Sprintf("Answered %d/%d", p.Done, p.Total) }

// Action is one button: what it says, the ref it carries (law 5), how it
// stands out, and whether it first collects free text.
type Action struct {
	// Label is the whole label as shown. When Keep is set, Label ends
	// with it, and a renderer that must shorten Label cuts before it.
	Label string
	Keep  string
	Ref   Ref
	Style Style
	Input Input
}

// Head is the part of Label a renderer may cut: all of it but Keep.
func (a Action) Head() string { return strings.TrimSuffix(a.Label, a.Keep) }

// Style is how a button stands out.
type Style string

const (
	StyleDefault Style = "default"
	StylePrimary Style = "primary" // the recommended choice, approve, answer
	StyleDanger  Style = "danger"  // deny
)

// Input says whether a button collects free text before it counts.
type Input string

const (
	InputNone     Input = ""         // the click is the answer
	InputRequired Input = "required" // the text is the answer (a clarification, a form item's own answer)
	InputOptional Input = "optional" // the text is an optional reason (deny)
)

// CardOutcome is how a closed question ended, as its cards show it.
type CardOutcome struct {
	State   State
	By      string // DeciderLabel of who closed it
	Surface Surface
	At      time.Time
	// Line is OutcomeLine: who closed it, how and when, in one sentence.
	Line string
	// Label names Choice ("Chosen", "Verdict", "Answer", "Answers");
	// both are "" when nothing was chosen (declined, timed out, ...).
	Label  string
	Choice string
	Reason string
}

// Button labels, the same on every surface.
const (
	LabelApprove       = "Approve"
	LabelDeny          = "Deny"
	LabelDecline       = "Decline: let the agent decide"
	LabelAnswer        = "Reply to answer"
	LabelSomethingElse = "Something else"
	// RecommendedNote ends the label of a recommended choice.
	RecommendedNote = " (Recommended)"
)

// digestShown is how much of an argument digest a card shows.
const digestShown = 12

// NewCard is q's card as it stands, for the card m (as posted: its kind
// and repeat mark decide the markers, so every edit keeps them).
func NewCard(q *Question, m MessageRef) Card {
	as := m.Kind
	if as == "" {
		as = postedAs(m)
	}
	c := Card{
		QuestionID: q.ID, Kind: q.Kind, State: q.State, As: as,
		Heading: KindTitle(q.Kind), Markers: markers(q, as, m.Repeat), Meta: meta(q), Text: q.Text,
	}
	if q.Context != "" {
		c.Sections = append(c.Sections, Section{Kind: SectionContext, Body: q.Context})
	}
	open := q.Open()
	ref := func(a RefAction, item, option int) Ref {
		return Ref{QuestionID: q.ID, Item: item, Action: a, Option: option}
	}
	switch q.Kind {
	case KindDecision:
		if !open {
			break
		}
		for i, o := range q.Options {
			s := Section{Kind: SectionOption, Index: i, Title: o.Title, Body: o.Writeup, Recommended: o.Recommended}
			s.Actions = []Action{choice(o.Title, o.Recommended, ref(RefOption, -1, i))}
			c.Sections = append(c.Sections, s)
		}
	case KindApproval:
		if q.Call == nil {
			break
		}
		s := Section{Kind: SectionCall, Title: q.Call.Tool, Body: prettyJSON(q.Call.Arguments)}
		if d := q.Call.ArgumentsSHA256; len(d) >= digestShown {
			s.Digest = d[:digestShown]
		}
		if open {
			s.Actions = []Action{
				{Label: LabelApprove, Ref: ref(RefApprove, -1, 0), Style: StylePrimary},
				{Label: LabelDeny, Ref: ref(RefDeny, -1, 0), Style: StyleDanger, Input: InputOptional},
			}
		}
		c.Sections = append(c.Sections, s)
	case KindForm:
		done, total := len(q.Answers), len(q.Items)
		c.Progress = &FormProgress{Done: done, Total: total}
		if !open {
			break
		}
		for i, it := range q.Items {
			s := Section{Kind: SectionItem, Index: i, Title: it.Question}
			for _, o := range it.Options {
				s.Choices = append(s.Choices, Choice{Label: o.Label, Description: o.Description, Recommended: o.Recommended})
			}
			if a, ok := q.Answered(it.ID); ok {
				s.Answer = &ItemAnswered{Text: itemValue(it, a), Own: a.OptionID == "", By: DeciderLabel(a.Decider),
					Surface: a.Decider.Surface, At: a.At}
			} else {
				// Rows of buttons have no headings on some platforms, so
				// a label names its item when there are several.
				num := ""
				if len(q.Items) > 1 {
					num = fmt.Sprintf("%d. ", i+1)
				}
				for j, o := range it.Options {
					s.Actions = append(s.Actions, choice(num+o.Label, o.Recommended, ref(RefOption, i, j)))
				}
				s.Actions = append(s.Actions, Action{Label: num + LabelSomethingElse, Ref: ref(RefText, i, 0),
					Style: StyleDefault, Input: InputRequired})
			}
			c.Sections = append(c.Sections, s)
		}
	}
	if open {
		if q.Kind == KindClarification {
			c.Actions = append(c.Actions, Action{Label: LabelAnswer, Ref: ref(RefText, -1, 0), Style: StylePrimary, Input: InputRequired})
		}
		c.Actions = append(c.Actions, Action{Label: LabelDecline, Ref: ref(RefDecline, -1, 0), Style: StyleDefault})
	} else {
		c.Outcome = outcome(q)
	}
	return c
}

// NewReminder is the reminder of a still-open q for room on surface: the
// heading and markers of its card, what is asked and by when, and the
// card it reminds of when that room holds one. It carries no buttons:
// only cards are edited when the question closes.
func NewReminder(q *Question, surface Surface, room string) Card {
	c := Card{
		QuestionID: q.ID, Kind: q.Kind, State: q.State, As: DeliverRemind,
		Heading: KindTitle(q.Kind), Markers: markers(q, DeliverRemind, false), Meta: meta(q), Text: q.Text,
	}
	for i := range q.Messages {
		if m := q.Messages[i]; m.Surface == surface && m.Room == room {
			c.ReplyTo = &m
		}
	}
	return c
}

// postedAs reads what a card recorded before cards stored their kind was
// posted as: the delivery key, which core wrote, says whether it was an
// escalation (roomDeliveries' purpose). Cards recorded since carry Kind.
func postedAs(m MessageRef) DeliveryKind {
	if strings.Contains(m.Delivery, ":escalate:") {
		return DeliverEscalate
	}
	return DeliverPost
}

func markers(q *Question, as DeliveryKind, repeat bool) []Marker {
	var ms []Marker
	if as == DeliverRemind {
		ms = append(ms, MarkerReminder)
	}
	switch q.Reversibility {
	case HardToReverse:
		ms = append(ms, MarkerHardToReverse)
	case Unclassified, "":
		ms = append(ms, MarkerUnclassified)
	}
	if as == DeliverEscalate {
		ms = append(ms, MarkerEscalated)
	}
	if repeat {
		ms = append(ms, MarkerRepeat)
	}
	return ms
}

func meta(q *Question) Meta {
	m := Meta{Agent: q.Agent, RunID: q.RunID, Labels: q.Labels, Asked: q.CreatedAt}
	if q.Open() {
		m.Deadline = q.Deadline
	}
	return m
}

func choice(label string, recommended bool, r Ref) Action {
	a := Action{Label: label, Ref: r, Style: StyleDefault}
	if recommended {
		a.Label, a.Keep, a.Style = label+RecommendedNote, RecommendedNote, StylePrimary
	}
	return a
}

func outcome(q *Question) *CardOutcome {
	r := q.Resolution
	if r == nil {
		return &CardOutcome{State: q.State}
	}
	o := &CardOutcome{State: q.State, By: DeciderLabel(r.Decider), Surface: r.Decider.Surface, At: r.At, Line: OutcomeLine(q)}
	if q.State != StateAnswered {
		return o
	}
	o.Choice, o.Reason = ChoiceLabel(q), r.Reason
	switch q.Kind {
	case KindDecision:
		o.Label = "Chosen"
	case KindApproval:
		o.Label = "Verdict"
	case KindForm:
		o.Label, o.Reason = "Answers", ""
	default:
		o.Label = "Answer"
	}
	return o
}

// itemValue is what an answered form item shows: the option's label or
// the free text.
func itemValue(it FormItem, a ItemAnswer) string {
	for _, o := range it.Options {
		if o.ID == a.OptionID {
			return o.Label
		}
	}
	return a.Text
}

// prettyJSON indents an approval's arguments for people; arguments that
// are not JSON (never stored, but read defensively) show as they are.
func prettyJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

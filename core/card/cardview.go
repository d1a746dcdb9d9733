package card

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/askbridge/askbridge/core"
)

// Card is the platform-neutral view of one message about a question, at
// one moment: a card as posted and as every later edit shows it, or a
// reminder. It is built once, here (New, NewReminder); each chat adapter
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
	QuestionID core.QuestionID
	Kind       core.Kind
	State      core.State
	// As is what this message is: DeliverPost or DeliverEscalate for a
	// card, DeliverRemind for a reminder.
	As core.DeliveryKind
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
	// Tally counts the votes of a question that needs several people to
	// agree (TallyOf); nil without a quorum. Its lines hold names.
	Tally *core.Tally
	// Actions are the card's own buttons, after those of its sections:
	// decline on every open question, and a clarification's answer.
	// A closed card has none, anywhere.
	Actions []Action
	// Outcome is set once the question is closed.
	Outcome *Outcome
	// ReplyTo is, on a reminder, the card in the same room it reminds of
	// (the latest one), or nil when that room holds none.
	ReplyTo *core.MessageRef
	// Mentions are, on a reminder, who on this surface may decide and has
	// not acted yet, for the platform to notify (Service.Reminder).
	Mentions []core.Mention
}

// AwaitingLabel starts a reminder's list of who it calls on.
const AwaitingLabel = "Waiting for"

// NamedOnly words mentions for a one-way door, where an id is a person's
// address or a topic that works as a password (core.Surface.RoomIsPersonal):
// each configured person by name, the rest counted, no id shown.
func NamedOnly(ms []core.Mention) []string {
	var out []string
	others := 0
	for _, m := range ms {
		if m.Name != "" && !m.Role {
			out = append(out, m.Name)
		} else {
			others++
		}
	}
	switch {
	case others == 1:
		out = append(out, "1 other")
	case others > 1:
		out = append(out, fmt.Sprintf("%d others", others))
	}
	return out
}

// Marker is a flag shown beside a card's heading.
type Marker string

const (
	MarkerHardToReverse Marker = "hard_to_reverse"
	MarkerUnclassified  Marker = "unclassified"
	MarkerEscalated     Marker = "escalated"
	// The escalated card of a question that held votes, or answered
	// parts, when it escalated or since (escalatedMarker).
	MarkerEscalatedVotes Marker = "escalated_votes"
	MarkerEscalatedItems Marker = "escalated_items"
	MarkerEscalatedCalls Marker = "escalated_calls"
	MarkerReminder       Marker = "reminder"
	MarkerRepeat         Marker = "posted_again"
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
	case MarkerEscalatedVotes:
		return EscalatedVotesMarker
	case MarkerEscalatedItems:
		return EscalatedItemsMarker
	case MarkerEscalatedCalls:
		return EscalatedCallsMarker
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
	Agent  core.AgentID
	RunID  core.RunID
	Labels core.Labels
	Asked  time.Time
	// Deadline is when the question times out; zero once it is closed.
	Deadline time.Time
}

// SectionKind names a part of a card's body.
type SectionKind string

const (
	SectionContext SectionKind = "context" // Body: the asker's context
	SectionOption  SectionKind = "option"  // one decision option: Title, Body (its write-up), Recommended
	SectionCall    SectionKind = "call"    // an approval's tool call: Title (the tool), Body (arguments, indented JSON), Hash
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
	// Hash is the start of the call's argument hash (sha256, hex),
	// enough to compare by eye; "" when there is none.
	Hash    string
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
	Own bool
	// By is who decided it (PartBy): a person, or a standing approval,
	// named with who granted it and when.
	By string
	// Surface is where the act that decided it came from
	// (core.ItemAnswer.Surface): the person's, or the bridge's for a
	// standing approval or a policy rule, whose granter or writer did
	// not act on this part.
	Surface core.Surface
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
	Ref   core.Ref
	Style Style
	Input Input
	// Prefill is the text an input starts with: the arguments as asked,
	// indented, for InputArguments.
	Prefill string
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
	// InputArguments: the text is the call's arguments as edited, JSON,
	// starting from Action.Prefill (edit and approve).
	InputArguments Input = "arguments"
)

// Outcome is how a closed question ended, as its cards show it.
type Outcome struct {
	State core.State
	// Closer is who or what closed it (CloserOf).
	Closer core.Closer
	// By and Surface name the one person who closed it as a whole (an
	// answer, a decline, an operator's withdrawal): DeciderLabel. Both
	// are "" when no one person did (a quorum, a standing approval,
	// parts, the bridge, the agent); Line says who or what did.
	By      string
	Surface core.Surface
	At      time.Time
	// Line is OutcomeLine: who or what closed it, how and when, in one
	// sentence.
	Line string
	// Label names Choice ("Chosen", "Verdict", "Answer", "Answers");
	// both are "" when nothing was chosen (declined, timed out, ...).
	Label  string
	Choice string
	Reason string
}

// Button labels, the same on every surface.
const (
	LabelApprove     = "Approve"
	LabelDeny        = "Deny"
	LabelEditApprove = "Edit and approve"
	// LabelStandingRun approves and stops asking about the tool in the
	// run; LabelStandingAgent's %d is the route's hours.
	LabelStandingRun = "Approve, and don't ask again for this tool in this run"
	// LabelStandingAgent fits Telegram's 60 characters with the most hours
	// a route takes (core.MaxStandingHours), so no cut takes the hours.
	LabelStandingAgent = "Approve, and allow this tool for this agent for %d hours"
	LabelDecline       = "Decline: let the agent decide"
	LabelAnswer        = "Reply to answer"
	// LabelAnswerOnPage is LabelAnswer where a reply reaches nobody: an
	// email's link or an ntfy button, whose page takes the answer
	// (nothing reads replies to the mail or the notification, so
	// "Reply" would lose it).
	LabelAnswerOnPage = "Open the page to answer"
	// LabelSendAnswer is LabelAnswer on that page, where the answer is
	// typed and sent.
	LabelSendAnswer    = "Send the answer"
	LabelSomethingElse = "Something else"
	// RecommendedNote ends the label of a recommended choice.
	RecommendedNote = " (Recommended)"
)

// LabelAnsweredBefore heads, on a form closed unfinished, the answers
// given before it closed (Outcome.Label).
const LabelAnsweredBefore = "Answered before it closed"

// TakesText reports whether any of the card's actions takes an answer in
// words, which a platform that reads thread replies can take from a
// reply too.
func (c Card) TakesText() bool {
	for _, a := range c.Actions {
		if a.Input == InputRequired {
			return true
		}
	}
	for _, s := range c.Sections {
		for _, a := range s.Actions {
			if a.Input == InputRequired {
				return true
			}
		}
	}
	return false
}

// Only is c with only the actions keep lets through, on its sections
// and its own; c itself is left as it is. A door that sends each
// recipient a copy of their own (an email, an ntfy topic) keeps what
// the recipient may do (core.Service.ActRefusal), so that no link in it
// is one its page could only refuse.
func (c Card) Only(keep func(Action) bool) Card {
	drop := func(a Action) bool { return !keep(a) }
	c.Actions = slices.DeleteFunc(slices.Clone(c.Actions), drop)
	c.Sections = slices.Clone(c.Sections)
	for i := range c.Sections {
		c.Sections[i].Actions = slices.DeleteFunc(slices.Clone(c.Sections[i].Actions), drop)
	}
	return c
}

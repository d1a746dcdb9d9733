package core

import (
	"fmt"
	"slices"
	"strings"
)

// Kind is what sort of answer a question wants.
type Kind string

const (
	KindClarification Kind = "clarification" // free text
	KindDecision      Kind = "decision"      // pick one of 2+ options, each with its trade-offs
	KindApproval      Kind = "approval"      // approve or deny one gated tool call
	KindForm          Kind = "form"          // 1-4 multiple-choice items, each with a free-text fallback
)

var kinds = []Kind{KindClarification, KindDecision, KindApproval, KindForm}

func (k Kind) String() string { return string(k) }

// ParseKind accepts exactly the four kind names.
func ParseKind(s string) (Kind, error) {
	for _, k := range kinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", Errorf(CodeInvalid, "parse kind", "kind %q is not one of clarification, decision, approval, form", s)
}

// State is where a question is in its life. Open is the only state that
// changes; every other state is final.
type State string

const (
	StateOpen      State = "open"
	StateAnswered  State = "answered"
	StateDeclined  State = "declined"
	StateTimedOut  State = "timed_out"
	StateExpired   State = "expired"
	StateCancelled State = "cancelled"
)

func (s State) String() string { return string(s) }

// Closed reports whether s is final.
func (s State) Closed() bool { return s != StateOpen && s != "" }

// Reversibility is how costly the choice behind a question is to undo. An
// asker must say; a stored record that predates the field reads as
// Unclassified and is never guessed.
type Reversibility string

const (
	Reversible    Reversibility = "reversible"
	HardToReverse Reversibility = "hard_to_reverse"
	Unclassified  Reversibility = "unclassified"
)

func (r Reversibility) String() string { return string(r) }

// ParseReversibility accepts the two values an asker may give. Unclassified
// is refused: it is what old records read as, not a choice.
func ParseReversibility(s string) (Reversibility, error) {
	switch Reversibility(s) {
	case Reversible, HardToReverse:
		return Reversibility(s), nil
	case "":
		return "", Errorf(CodeInvalid, "parse reversibility", "reversibility is required: reversible or hard_to_reverse")
	}
	return "", Errorf(CodeInvalid, "parse reversibility", "reversibility %q is not reversible or hard_to_reverse", s)
}

// TimeoutPolicy says what happens when a question's deadline passes.
type TimeoutPolicy string

const (
	// OnTimeoutDeny closes the question as timed_out: the agent hears that
	// nobody answered, never that a human denied.
	OnTimeoutDeny TimeoutPolicy = "deny"
	// OnTimeoutEscalate notifies the route's escalation route once and
	// extends the deadline; the next timeout denies.
	OnTimeoutEscalate TimeoutPolicy = "escalate"
	// OnTimeoutReask notifies the same route again and extends the
	// deadline, at most MaxReasks times; then it denies.
	OnTimeoutReask TimeoutPolicy = "reask"
)

func (p TimeoutPolicy) String() string { return string(p) }

// ParseTimeoutPolicy maps "" to the default, deny.
func ParseTimeoutPolicy(s string) (TimeoutPolicy, error) {
	switch TimeoutPolicy(s) {
	case "":
		return OnTimeoutDeny, nil
	case OnTimeoutDeny, OnTimeoutEscalate, OnTimeoutReask:
		return TimeoutPolicy(s), nil
	}
	return "", Errorf(CodeInvalid, "parse on_timeout", "on_timeout %q is not one of deny, escalate, reask", s)
}

// Surface is a door a decider comes through. Chat surfaces are where cards
// are posted; api, console and mcp (the person driving an agent host,
// asked through MCP elicitation) are answer-only; system and agent are the
// bridge itself (timeouts, expiry) and the asking agent (cancel).
type Surface string

const (
	SurfaceSlack    Surface = "slack"
	SurfaceDiscord  Surface = "discord"
	SurfaceTelegram Surface = "telegram"
	SurfaceTeams    Surface = "teams" // a room is a channel, chat or person; ids are AAD object ids
	SurfaceEmail    Surface = "email" // a room is a recipient address; links carry the answer
	SurfaceNtfy     Surface = "ntfy"  // a room is a topic; action buttons carry the answer
	SurfaceAPI      Surface = "api"
	SurfaceConsole  Surface = "console"
	SurfaceMCP      Surface = "mcp"
	SurfaceSystem   Surface = "system"
	SurfaceAgent    Surface = "agent"
	// SurfaceWebhook is the outbox of the callbacks told when a question
	// closes (callback.go): it holds deliveries, never cards or deciders.
	SurfaceWebhook Surface = "webhook"
)

// ChatSurfaces are the surfaces that hold cards and so have outboxes. It
// is the one list of chat platforms: configuration checks, the API's
// messages and the stores' outboxes all follow it.
var ChatSurfaces = []Surface{SurfaceSlack, SurfaceDiscord, SurfaceTelegram, SurfaceTeams, SurfaceEmail, SurfaceNtfy}

// AnswerSurfaces are the surfaces a human can answer through: every chat
// surface, then the API, the console and an agent's MCP host.
var AnswerSurfaces = append(slices.Clip(ChatSurfaces), SurfaceAPI, SurfaceConsole, SurfaceMCP)

// SurfaceNames lists surfaces for a person to read: "slack, discord or
// telegram".
func SurfaceNames(ss []Surface) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = string(s)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func (s Surface) String() string { return string(s) }

// RoomIsPersonal reports whether a room on s is one person's address (an
// email address) or a topic that works as a password (ntfy): it is named
// neither in the event log, which names nobody and is exported, nor to
// everyone who can read a question.
func (s Surface) RoomIsPersonal() bool { return s == SurfaceEmail || s == SurfaceNtfy }

// RoleSurfaces are the surfaces whose deciders carry roles, which a
// route's "role:<id>" decider entry matches: Slack's user groups,
// Discord's roles, and the role of the token the API or the console is
// used with. On any other a role entry would match no one.
var RoleSurfaces = []Surface{SurfaceSlack, SurfaceDiscord, SurfaceAPI, SurfaceConsole}

// IsChat reports whether cards are posted on s.
func (s Surface) IsChat() bool { return slices.Contains(ChatSurfaces, s) }

// OutboxSurfaces are the surfaces the stores keep an outbox for: every
// chat surface, then the webhook's.
var OutboxSurfaces = append(slices.Clip(ChatSurfaces), SurfaceWebhook)

// HasOutbox reports whether the stores keep an outbox for s.
func (s Surface) HasOutbox() bool { return slices.Contains(OutboxSurfaces, s) }

// ParseSurface accepts the surfaces a human can answer through
// (AnswerSurfaces).
func ParseSurface(s string) (Surface, error) {
	if slices.Contains(AnswerSurfaces, Surface(s)) {
		return Surface(s), nil
	}
	return "", Errorf(CodeInvalid, "parse surface", "surface %q is not %s", s, SurfaceNames(AnswerSurfaces))
}

// EventKind names an entry of the append-only event log.
type EventKind string

const (
	EventAsked        EventKind = "asked"
	EventNotified     EventKind = "notified" // a card was posted; payload has its message reference
	EventReminded     EventKind = "reminded"
	EventEscalated    EventKind = "escalated"
	EventItemAnswered EventKind = "item_answered" // one form item answered; the form stays open until all are
	EventAnswered     EventKind = "answered"
	EventDeclined     EventKind = "declined"
	EventTimedOut     EventKind = "timed_out"
	EventExpired      EventKind = "expired"
	EventCancelled    EventKind = "cancelled"
	EventRefused      EventKind = "refused" // an attempt that changed nothing, and why
	// EventUndelivered: a card, edit or reminder was given up on (the
	// platform refused it for good, or every retry failed), so nobody is
	// told it arrived when it did not (law 8).
	EventUndelivered EventKind = "undelivered"
	// EventReconfigured: the configuration was read again, and applied
	// or refused (a loose event, of no question; payload Reload).
	EventReconfigured EventKind = "reconfigured"
	// EventCheckpoint: a purge dropped chained events; its Chain.Purged
	// keeps the links that let the audit chain verify across the gap.
	EventCheckpoint EventKind = "checkpoint"
)

func (k EventKind) String() string { return string(k) }

// closeEvent is the event kind recorded when a question enters state s.
func closeEvent(s State) EventKind {
	switch s {
	case StateAnswered:
		return EventAnswered
	case StateDeclined:
		return EventDeclined
	case StateTimedOut:
		return EventTimedOut
	case StateExpired:
		return EventExpired
	case StateCancelled:
		return EventCancelled
	}
	panic(fmt.Sprintf("core: no close event for state %q", s))
}

package core

import (
	"errors"
	"fmt"
	"strings"
)

// Code is the small vocabulary every door maps to its own reply: the HTTP
// API to a status, a chat adapter to a private note. Only Internal is worth
// logging; the others are the caller's doing.
type Code string

const (
	CodeInvalid   Code = "invalid"   // the input breaks a rule; nothing changed
	CodeNotFound  Code = "not_found" // unknown id, or an id the caller may not see
	CodeForbidden Code = "forbidden" // the caller may not do this; nothing changed
	CodeConflict  Code = "conflict"  // the question is not in a state that allows this
	CodeInternal  Code = "internal"  // our fault: the store failed, a bug
)

// Error carries a code, a human message that is safe to show to the caller,
// the operation that failed and, for internal errors, the cause.
type Error struct {
	Code    Code
	Op      string
	Message string
	Err     error
}

func (e *Error) Error() string {
	switch {
	case e.Err != nil && e.Message != "":
		return fmt.Sprintf("%s: %s: %v", e.Op, e.Message, e.Err)
	case e.Err != nil:
		return fmt.Sprintf("%s: %v", e.Op, e.Err)
	default:
		return fmt.Sprintf("%s: %s", e.Op, e.Message)
	}
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds a coded error with a formatted, caller-safe message.
func Errorf(code Code, op, format string, args ...any) error {
	return &Error{Code: code, Op: op, Message: fmt.Sprintf(format, args...)}
}

// ErrNotThisWay marks the refusal of an act to someone who may answer
// the question, only not this way (a standing approval asked of someone
// an escalation let in): a door's note says why, where a refusal of the
// person says they may not answer at all (card.RefusalNote).
var ErrNotThisWay = errors.New("may answer, but not this way")

// errDecidedFirst marks the conflict of an answer to a part (a form
// item, a batch's call, a person's vote) that was decided before it came:
// a race lost, not a rule broken, which observe.go counts so.
var errDecidedFirst = errors.New("decided before this came")

// errTooFast marks resolve's giving up on a question whose changes kept
// landing before the attempt's own: the bridge could not get it in.
var errTooFast = errors.New("changed too often while being tried")

// conflictOf is Errorf's conflict, marked with why (errDecidedFirst,
// errTooFast) for those who count outcomes; the caller sees the message
// alone.
func conflictOf(why error, op, format string, args ...any) error {
	return &Error{Code: CodeConflict, Op: op, Message: fmt.Sprintf(format, args...), Err: why}
}

// Internal wraps a cause the caller cannot act on.
func Internal(op string, err error) error {
	if err == nil {
		return nil
	}
	var ce *Error
	if errors.As(err, &ce) {
		return err // already coded: keep the original code
	}
	return &Error{Code: CodeInternal, Op: op, Err: err}
}

// ErrorCode reports the code of err, CodeInternal for an uncoded error and
// "" for nil.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var ce *Error
	if errors.As(err, &ce) {
		return ce.Code
	}
	if errors.Is(err, ErrClosed) || errors.Is(err, ErrDuplicate) {
		return CodeConflict
	}
	var stale *StaleError
	if errors.As(err, &stale) {
		return CodeConflict
	}
	return CodeInternal
}

// ErrorMessage is the caller-safe text of err: the message of a coded error,
// and a generic line for anything internal, whose cause stays in the logs.
func ErrorMessage(err error) string {
	if Unavailable(err) {
		return UnavailableMessage
	}
	var ce *Error
	if errors.As(err, &ce) && ce.Code != CodeInternal && ce.Message != "" {
		return ce.Message
	}
	var closed *ClosedError
	if errors.As(err, &closed) {
		return closed.Error()
	}
	return "internal error"
}

// ErrNotFound is what stores return for an id they do not hold. Doors must
// answer an id the caller may not see with this same error (law 6).
var ErrNotFound = &Error{Code: CodeNotFound, Op: "lookup", Message: "no such question"}

// ClosedError tells a loser the truth: the question was already closed, by
// whom, when and how (law 2). It is returned with CodeConflict.
type ClosedError struct {
	Question *Question
	// Own is set when who was refused is who closed it as a whole (a
	// person's answer, decline or cancel, matched as the chokepoint
	// matches a voter): a double tap, a second surface. Their answer
	// stands, and "yours was not recorded" would have them believe it
	// lost (card.RefusalNote).
	Own bool
}

// Error names who closed the question by names no person chose: the
// configured person ("person bob on api") when the closer's account is
// one, for whoever lost wants to know who beat them, not which of their
// accounts; otherwise the surface and platform id. Display names are
// chosen by people (or vouched for, free text), and this text reaches
// agents outside any fence (law 7); people get the display name through
// card.OutcomeLine (core/card) on their own surface.
func (e *ClosedError) Error() string {
	r := e.Question.Resolution
	if r == nil {
		return fmt.Sprintf("question %s is %s", e.Question.ID, e.Question.State)
	}
	who := ActorText(r.Decider)
	switch grants := atAskGrants(e.Question); {
	case r.Standing != nil && CloserOf(e.Question) == CloserStanding:
		// The standing approval closed it, not its granter (law 12).
		who = standingText(*r.Standing)
	case grants != "":
		// So did those that closed a batch at the ask.
		who = grants
	case CloserOf(e.Question) == CloserQuorum:
		// The votes for the way it closed did, the last only reaching
		// the count; those the other way did not (card.OutcomeLine's
		// count too). The vote that closed it may be the other way (an
		// approve after a reload left the denies in enough), so the last
		// named is the last of those counted.
		choice, n := ClosingChoice(e.Question), 0
		for _, v := range e.Question.CountedVotes() {
			if v.Choice == choice {
				n, who = n+1, ActorText(v.Decider)
			}
		}
		switch {
		case choice != DenyOption:
			who = fmt.Sprintf("a quorum of %d (the last vote by %s)", n, who)
		case n > 1:
			who = fmt.Sprintf("%d denies (the last by %s)", n, who)
		default:
			who = "a deny by " + who
		}
	}
	return fmt.Sprintf("question %s was already closed by %s at %s as %s",
		e.Question.ID, who, r.At.UTC().Format("2006-01-02T15:04:05Z"), r.State)
}

// standingText names a standing approval in text that reaches agents
// unfenced: by its id, and its granter by ActorText.
func standingText(u StandingUse) string {
	if !safeID(u.ID) {
		return "a standing approval (granted by " + ActorText(u.GrantedBy) + ")"
	}
	return "standing approval " + u.ID + " (granted by " + ActorText(u.GrantedBy) + ")"
}

// atAskGrants names what closed a batch at the ask (closedAtAsk), when a
// standing approval took part: each standing approval once, and the
// policy rules if any decided calls too; "" otherwise, when the
// resolution's decider (the bridge itself, for rules alone) says it.
func atAskGrants(q *Question) string {
	if !closedAtAsk(q) {
		return ""
	}
	var who []string
	seen, rules := map[string]bool{}, false
	for _, a := range q.Answers {
		switch u := a.Standing; {
		case u != nil && !seen[u.ID]:
			seen[u.ID] = true
			who = append(who, standingText(*u))
		case a.Policy != nil:
			rules = true
		}
	}
	if len(who) > 0 && rules {
		who = append(who, "askbridge's policy rules")
	}
	return strings.Join(who, " and ")
}

// ActorText names d in text that reaches agents (or their hosts) unfenced: by the person
// the configuration ties the account to, else by surface and platform id,
// never by a display name.
func ActorText(d Decider) string {
	switch {
	case d.Surface == SurfaceSystem:
		return "askbridge"
	case d.Person != "" && safeID(d.Person):
		return "person " + d.Person + " on " + string(d.Surface)
	case d.ID != "" && safeID(d.ID) && !d.Surface.RoomIsPersonal():
		return string(d.Surface) + " " + d.ID
	}
	return string(d.Surface) // an address or a topic is its owner's alone
}

// safeID reports whether a platform id is plain enough to print outside a
// fence: letters, digits and a few separators, as every platform's ids are.
func safeID(s string) bool {
	if len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.:@", c)) {
			return false
		}
	}
	return true
}

// Is lets errors.Is(err, ErrClosed) match any ClosedError.
func (e *ClosedError) Is(target error) bool { return target == ErrClosed }

// AppliedError is a store's answer to a transition it had applied
// already and was handed again, when the question has closed since by
// another attempt: a store that sends a command again after losing its
// reply (store/redis) finds its own earlier change. The transition stands
// (its vote or form items are recorded) and it did not close the
// question. Question is the question as stored.
type AppliedError struct {
	Question *Question
}

func (e *AppliedError) Error() string {
	return fmt.Sprintf("question %s: the transition was applied, and the question is %s since", e.Question.ID, e.Question.State)
}

// StaleError is a store's refusal of a Change computed from a version
// the question has moved on from: another change landed first, and
// nothing was written. Question is the question as stored when the store
// has it at hand (core computes the change again from it), else nil (core
// reads it again). It is returned with CodeConflict; only the chokepoint
// sees it, which tries again (resolve.go).
type StaleError struct {
	Question *Question
}

func (e *StaleError) Error() string {
	return "the question changed since it was read"
}

// ErrClosed matches every ClosedError through errors.Is.
var ErrClosed = errors.New("question already closed")

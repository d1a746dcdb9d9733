package core

import (
	"time"

	"github.com/askbridge/askbridge/fence"
)

// Shape is a question's kind as its rules see it: the four kinds an
// asker names, with a batch of tool calls (an approval asking for several
// calls at once, Kind approval on the wire) a shape of its own, since
// everything about it (its ask, its buttons, its answer, its card, its
// resume) differs from a single call's. Each shape has one home, a kind
// value in homes below; a Shape missing there is refused at the ask, the
// answer and the close.
type Shape string

const (
	ShapeClarification Shape = "clarification"
	ShapeDecision      Shape = "decision"
	ShapeApproval      Shape = "approval"
	ShapeBatch         Shape = "batch"
	ShapeForm          Shape = "form"
)

var shapes = []Shape{ShapeClarification, ShapeDecision, ShapeApproval, ShapeBatch, ShapeForm}

func (s Shape) String() string { return string(s) }

// Shapes lists every shape, in a stable order: the packages that keep a
// per-kind table of their own (core/card's card sections) test theirs
// against it, so a new kind fails their tests until its entry is written.
func Shapes() []Shape { return append([]Shape(nil), shapes...) }

// Shape is q's shape: a batch if it asks for several tool calls, else
// its kind.
func (q *Question) Shape() Shape {
	if q.IsBatch() {
		return ShapeBatch
	}
	return Shape(q.Kind)
}

// shape is the shape of the question in would ask.
func (in AskInput) shape() Shape {
	if in.Kind == KindApproval && len(in.Calls) > 0 {
		return ShapeBatch
	}
	return Shape(in.Kind)
}

// kind is one shape's home: every rule that differs by kind, in one
// value, each field pointing at a function in that kind's file
// (kind_clarification.go, kind_decision.go, kind_approval.go,
// kind_batch.go, kind_form.go). What every kind shares stays where it
// was: the ask's common fields (askinput.go), the chokepoint (resolve.go),
// Next's checks (next.go), the fenced wording (fence). Features layered
// on kinds plug in at one place each: a quorum by votes (quorumOf and
// voteTransition in quorum.go take and build the vote, withVote in
// next_kinds.go counts it);
// parts by parts (partsTransition in answer.go, withParts); edits and
// standing approvals in the approval's and the batch's answer readings
// (approvalAnswer, batchItems), which are the only ones that take them.
type kind struct {
	// ask checks an ask of this kind: the fields it takes, and its
	// refusal of other kinds' fields (after AskInput.Validate's shared
	// checks).
	ask func(AskInput) error
	// button reads a click on one of this kind's buttons into the answer
	// it stands for (AnswerFor); a button that is not its kind's is
	// refused as not fitting.
	button func(q *Question, r Ref, in AnswerInput, text string) (AnswerInput, error)
	// takes says which of the answer fields beyond text and option this
	// kind reads (or refuses in words of its own); the others are
	// refused before answer runs (notTaken).
	takes answerFields
	// answer reads an answer to q into what it records: the resolution
	// that closes q, filled in from res (decider and time already set),
	// and the parts it records on the way, for a kind answered in parts.
	// It does no I/O and decides only what the question as read allows;
	// what must hold of the question as stored is next's. The resolution
	// goes by value so that a kind answered in parts, whose transition
	// copies it, costs no allocation of its own.
	answer func(q *Question, in AnswerInput, res Resolution) (Resolution, []ItemAnswer, error)
	// parts, for a kind answered part by part (a form's items, a batch's
	// calls), names the parts in its item event: its answers record
	// parts and close it once every part has one (partsTransition).
	parts string
	// votes: a quorum counts this kind's answers as votes
	// (voteTransition) when the route asks for several people; a kind
	// without takes no quorum at the ask (quorumOf).
	votes bool
	// next decides a transition against the question as stored (Next,
	// next_kinds.go).
	next nextRule
	// resume adds this kind's own part of what the agent resumes with
	// (ResumeOf): an answered question's body or verdict, its parts
	// in every state.
	resume func(in *fence.ResumeInput, q *Question)
}

// answerFields are the answer fields only some kinds take.
type answerFields struct {
	calls, items, edits bool
}

// homes is every shape's home. A new kind of question adds its value
// here, in a file of its own, and its rows to kind_test.go's table. It is
// filled by init, not by its declaration, because the homes' rules and
// the readers of homes call each other (an ask's check words errors that
// name who closed a question; that reads the question's home).
var homes map[Shape]kind

func init() {
	homes = map[Shape]kind{
		ShapeClarification: clarificationKind,
		ShapeDecision:      decisionKind,
		ShapeApproval:      approvalKind,
		ShapeBatch:         batchKind,
		ShapeForm:          formKind,
	}
}

// kindOf is q's home; false for a kind that has none (one added to
// enums.go alone, or a corrupt record).
func kindOf(q *Question) (kind, bool) {
	k, ok := homes[q.Shape()]
	return k, ok
}

// nextRuleOf is the rule Next applies to q, by its kind.
func nextRuleOf(q *Question) (nextRule, bool) {
	k, ok := kindOf(q)
	return k.next, ok && k.next != nil
}

// answeredInParts reports whether q's kind is answered part by part (a
// form's items, a batch's calls).
func answeredInParts(q *Question) bool {
	k, ok := kindOf(q)
	return ok && k.parts != ""
}

// notTaken refuses the fields of in that only other kinds take, in the
// order answers have always been checked.
func notTaken(k kind, in AnswerInput) error {
	const op = "answer"
	switch {
	case len(in.Calls) > 0 && !k.takes.calls:
		return Errorf(CodeInvalid, op, "only a batch of tool calls takes calls")
	case len(in.Items) > 0 && !k.takes.items:
		return Errorf(CodeInvalid, op, "only a form takes item answers")
	case (len(in.Arguments) > 0 || in.Standing != nil) && !k.takes.edits:
		return Errorf(CodeInvalid, op, "only an approval takes edited arguments or a standing approval")
	}
	return nil
}

// answerTransition is what an answer asks of q: its kind reads it
// (kind.answer), and the features the kind takes shape the transition:
// parts recorded one answer at a time, or a vote under a quorum, or else
// the close itself.
func (s *Service) answerTransition(q *Question, in AnswerInput, now time.Time) (Transition, error) {
	k, ok := kindOf(q)
	if !ok || k.answer == nil {
		return Transition{}, Errorf(CodeInvalid, "answer", "kind %q takes no answer", q.Kind)
	}
	if err := notTaken(k, in); err != nil {
		return Transition{}, err
	}
	res, parts, err := k.answer(q, in, Resolution{State: StateAnswered, ClosedBy: CloserPerson, Decider: publicDecider(in.Decider), At: now})
	switch {
	case err != nil:
		return Transition{}, err
	case k.parts != "":
		return s.partsTransition(q, k.parts, parts, &res, in.Decider, now), nil
	case k.votes && q.Quorum > 1:
		return s.voteTransition(q, in, &res, now)
	}
	// A copy of its own escapes into the transition, so that res, which
	// partsTransition and voteTransition only read, stays off the heap.
	r := res
	return Transition{Resolution: &r, Event: s.closeEvent(q, &r, r.Reason)}, nil
}

package core

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// ItemInput is one form item's answer: an option or free text.
type ItemInput struct {
	ItemID   string `json:"item_id"`
	OptionID string `json:"option_id,omitempty"`
	Text     string `json:"text,omitempty"`
}

// AnswerInput is a human's answer from any surface.
type AnswerInput struct {
	QuestionID QuestionID
	Decider    Decider
	// Text is the clarification's answer, an optional note on a decision,
	// or an approval's optional reason.
	Text string
	// OptionID is the chosen decision option, or ApproveOption /
	// DenyOption for an approval.
	OptionID string
	// Items answer form items, one or several at once.
	Items []ItemInput
	// Arguments, with OptionID ApproveOption, approves the call with
	// these arguments instead of those asked for: only the call's
	// editable keys may differ (edit.go).
	Arguments json.RawMessage
	// Standing, with ApproveOption, also grants a standing approval
	// (standing.go): later matching asks close at once.
	Standing *StandingRequest
	// Calls decide calls of a batch one by one; a batch answered with
	// OptionID alone has it applied to every call still undecided.
	Calls []CallDecision
	// Shown is the card, by its message id on the decider's surface,
	// that the caller's own response updates in place (a Discord click
	// answered with UPDATE_MESSAGE): its update is held back
	// (Outcome.Held) rather than sent by the outbox as well.
	Shown string
	// read is the question as the door read it to build this input
	// (AnswerFor): the chokepoint's first try starts from it instead of
	// reading it again, so a click costs one read and the close. The
	// close is written only if the question is still at read's version;
	// a change made since sends the attempt round again on the question
	// as stored (resolve), as a stale copy of any read would.
	read *Question
}

// The two choices of an approval, as option ids so that buttons and the
// API address them like any other option.
const (
	ApproveOption = "approve"
	DenyOption    = "deny"
)

// Answer records a human's answer. For a form it records the given items
// and closes the question once every item has an answer.
func (s *Service) Answer(ctx context.Context, in AnswerInput) (Outcome, error) {
	in.Decider = s.identify(in.Decider).Decider
	// The transition records the actor as the chokepoint's check let them
	// in (admitted), which a reload since the line above may have made
	// another person.
	admitted := in.Decider
	a := attempt{
		op: "answer", id: in.QuestionID, door: doorHuman, actor: in.Decider, shown: in.Shown, read: in.read,
		admitted: &admitted,
		build: func(q *Question, now time.Time) (Transition, error) {
			in := in
			in.Decider = admitted
			return s.answerBuild(in)(q, now)
		},
	}
	o, err := s.resolve(ctx, a)
	in.Decider = admitted
	if err != nil {
		s.recordRefusedVote(ctx, in.QuestionID, in.Decider, err)
	}
	if err == nil && len(in.Calls) > 0 {
		// Only a batch takes calls: their standing approvals.
		o.Standings = s.grantCalls(ctx, o.Question, in.Calls, in.Decider.Roles)
	}
	if err == nil && o.Closed && in.Standing != nil {
		// The approve counts either way; a standing approval that could
		// not be stored leaves o.Standing nil, and the question handed
		// back grants nothing, so the note says only what was recorded.
		var gerr error
		if o.Standing, gerr = s.grantStanding(ctx, o.Question, in.Standing, in.Decider.Roles); gerr != nil {
			o.Question = withoutGrant(o.Question)
		}
	}
	return o, err
}

// answerBuild is what an answer asks of the question it is given, by
// its kind's home (kind.go's answerTransition). "Approve all" and "deny
// all" decide the calls of a batch still undecided in q; a call decided
// meanwhile makes the change stale, and the next try leaves it to its
// decision.
//
// A standing approval decides the route's later calls, so only the
// route's own deciders grant one: someone let in by an escalation
// (allowed) decides the escalated call alone.
func (s *Service) answerBuild(in AnswerInput) func(q *Question, now time.Time) (Transition, error) {
	return func(q *Question, now time.Time) (Transition, error) {
		if grantsStanding(in) {
			if route, ok := s.RouteOf(q); !ok || !route.Allows(in.Decider) {
				return Transition{}, &Error{Code: CodeForbidden, Op: "answer", Err: ErrNotThisWay,
					Message: fmt.Sprintf("only route %s's own deciders grant its standing approvals: approve without one", q.Route)}
			}
		}
		return s.answerTransition(q, in, now)
	}
}

// grantsStanding reports whether in asks for a standing approval, for
// the call or for any call of a batch.
func grantsStanding(in AnswerInput) bool {
	return in.Standing != nil || slices.ContainsFunc(in.Calls, func(c CallDecision) bool { return c.Standing != nil })
}

// partsTransition records some of a question's parts (a form's items, a
// batch's calls) and closes it with res once every part has an answer;
// until then the item event, naming the parts under key, is appended.
// Whichever part lands last, each part's decider is its own, so the
// question closes as answered in parts.
func (s *Service) partsTransition(q *Question, key string, items []ItemAnswer, res *Resolution, d Decider, now time.Time) Transition {
	payload, _ := json.Marshal(map[string]any{key: itemIDs(items)})
	r := *res
	r.ClosedBy = CloserParts
	return Transition{
		Items:      items,
		Resolution: &r,
		Event:      s.closeEvent(q, &r, ""),
		ItemEvent: Event{QuestionID: q.ID, RunID: q.RunID, At: now, Kind: EventItemAnswered,
			Actor: s.pseudonym(d), Surface: d.Surface, Payload: payload},
	}
}

func itemIDs(items []ItemAnswer) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ItemID
	}
	return ids
}

// publicDecider is what a resolution keeps of a decider: roles are checked
// at the moment of the act and not stored.
func publicDecider(d Decider) Decider {
	return Decider{Surface: d.Surface, ID: d.ID, Name: d.Name, Person: d.Person}
}

// withoutGrant is a copy of q whose resolution grants no standing
// approval: the one it asked for could not be stored.
func withoutGrant(q *Question) *Question {
	c, res := *q, *q.Resolution
	res.Grants = nil
	c.Resolution = &res
	return &c
}

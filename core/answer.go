package core

import (
	"context"
	"encoding/json"
	"strings"
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
	a := attempt{
		op: "answer", id: in.QuestionID, door: doorHuman, actor: in.Decider, shown: in.Shown, read: in.read,
		build: s.answerBuild(in),
	}
	o, err := s.resolve(ctx, a)
	if err != nil {
		s.recordRefusedVote(ctx, in.QuestionID, in.Decider, err)
	}
	if err == nil && o.Question.IsBatch() {
		o.Standings = s.grantCalls(ctx, o.Question, in.Calls)
	}
	if err == nil && o.Closed && in.Standing != nil {
		// The approve counts either way; a standing approval that could
		// not be stored leaves o.Standing nil, and the note says only
		// what was recorded.
		o.Standing, _ = s.grantStanding(ctx, o.Question, in.Standing)
	}
	return o, err
}

// answerBuild is what an answer asks of the question it is given, by
// kind (clarification, decision, approval with its edit and standing
// approval, form, batch) and feature (quorum). "Approve all" and "deny
// all" decide the calls of a batch still undecided in q; a call decided
// meanwhile makes the change stale, and the next try leaves it to its
// decision.
func (s *Service) answerBuild(in AnswerInput) func(q *Question, now time.Time) (Transition, error) {
	return func(q *Question, now time.Time) (Transition, error) {
		if q.IsBatch() {
			return s.batchTransition(q, in, now)
		}
		if len(in.Calls) > 0 {
			return Transition{}, Errorf(CodeInvalid, "answer", "only a batch of tool calls takes calls")
		}
		return s.answerTransition(q, in, now)
	}
}

func (s *Service) answerTransition(q *Question, in AnswerInput, now time.Time) (Transition, error) {
	const op = "answer"
	d := in.Decider
	res := &Resolution{State: StateAnswered, ClosedBy: CloserPerson, Decider: publicDecider(d), At: now}
	if q.Kind != KindForm && len(in.Items) > 0 {
		return Transition{}, Errorf(CodeInvalid, op, "only a form takes item answers")
	}
	if q.Kind != KindApproval && (len(in.Arguments) > 0 || in.Standing != nil) {
		return Transition{}, Errorf(CodeInvalid, op, "only an approval takes edited arguments or a standing approval")
	}
	switch q.Kind {
	case KindClarification:
		if blank(in.Text) {
			return Transition{}, Errorf(CodeInvalid, op, "the answer must not be blank")
		}
		if in.OptionID != "" {
			return Transition{}, Errorf(CodeInvalid, op, "a clarification takes a text answer, not an option")
		}
		if err := checkLen(op, "answer", in.Text, MaxAnswerLen); err != nil {
			return Transition{}, err
		}
		res.Answer = in.Text
	case KindDecision:
		if in.OptionID == "" {
			return Transition{}, Errorf(CodeInvalid, op, "a decision is answered by choosing an option")
		}
		opt, ok := q.Option(in.OptionID)
		if !ok {
			return Transition{}, Errorf(CodeInvalid, op, "option %q is not one of this question's options", in.OptionID)
		}
		if err := checkLen(op, "note", in.Text, MaxReasonLen); err != nil {
			return Transition{}, err
		}
		res.OptionID, res.Answer, res.Reason = opt.ID, opt.Writeup, strings.TrimSpace(in.Text)
	case KindApproval:
		var approved bool
		switch in.OptionID {
		case ApproveOption:
			approved = true
		case DenyOption:
		default:
			return Transition{}, Errorf(CodeInvalid, op, "an approval is answered with %q or %q", ApproveOption, DenyOption)
		}
		if err := checkLen(op, "reason", in.Text, MaxReasonLen); err != nil {
			return Transition{}, err
		}
		res.Approved, res.Reason = &approved, strings.TrimSpace(in.Text)
		res.ArgumentsSHA256 = q.Call.ArgumentsSHA256
		if len(in.Arguments) > 0 {
			if !approved {
				return Transition{}, Errorf(CodeInvalid, op, "edited arguments go with %q, not %q", ApproveOption, DenyOption)
			}
			edit, err := editOf(q.Call, in.Arguments)
			if err != nil {
				return Transition{}, err
			}
			res.Edit = edit
		}
		if err := checkStanding(q, in.Standing, approved); err != nil {
			return Transition{}, err
		}
		res.Grants = in.Standing
	}
	if q.Quorum > 1 && (q.Kind == KindApproval || q.Kind == KindDecision) {
		return s.voteTransition(q, in, res, now)
	}
	switch q.Kind {
	case KindForm:
		items, err := formItems(q, in, d, now)
		if err != nil {
			return Transition{}, err
		}
		return s.partsTransition(q, "items", items, res, d, now), nil
	}
	return Transition{Resolution: res, Event: s.closeEvent(q, res, res.Reason)}, nil
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

// formItems checks a form answer: each item exists, is not answered yet,
// and gets exactly one existing option or non-blank free text.
func formItems(q *Question, in AnswerInput, d Decider, now time.Time) ([]ItemAnswer, error) {
	const op = "answer"
	if in.Text != "" || in.OptionID != "" {
		return nil, Errorf(CodeInvalid, op, "a form is answered item by item")
	}
	if len(in.Items) == 0 {
		return nil, Errorf(CodeInvalid, op, "the answer must name at least one form item")
	}
	seen := map[string]bool{}
	out := make([]ItemAnswer, 0, len(in.Items))
	for _, ii := range in.Items {
		item, ok := q.Item(ii.ItemID)
		if !ok {
			return nil, Errorf(CodeInvalid, op, "item %q is not one of this form's items", ii.ItemID)
		}
		if seen[ii.ItemID] {
			return nil, Errorf(CodeInvalid, op, "item %q is answered twice", ii.ItemID)
		}
		seen[ii.ItemID] = true
		if prev, done := q.Answered(ii.ItemID); done {
			return nil, Errorf(CodeConflict, op, "item %q was already answered at %s", ii.ItemID, prev.At.Format(time.RFC3339))
		}
		switch {
		case ii.OptionID != "" && ii.Text != "":
			return nil, Errorf(CodeInvalid, op, "item %q takes an option or free text, not both", ii.ItemID)
		case ii.OptionID != "":
			found := false
			for _, o := range item.Options {
				found = found || o.ID == ii.OptionID
			}
			if !found {
				return nil, Errorf(CodeInvalid, op, "option %q is not one of item %q's options", ii.OptionID, ii.ItemID)
			}
		case blank(ii.Text):
			return nil, Errorf(CodeInvalid, op, "item %q: the answer must not be blank", ii.ItemID)
		default:
			if err := checkLen(op, "items.text", ii.Text, MaxAnswerLen); err != nil {
				return nil, err
			}
		}
		out = append(out, ItemAnswer{ItemID: ii.ItemID, OptionID: ii.OptionID, Text: ii.Text, Decider: publicDecider(d), At: now})
	}
	return out, nil
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

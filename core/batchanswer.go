package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// batchDecisions are the calls an answer decides: those it names, or
// with OptionID alone ("approve all", "deny all") every call still
// undecided when the question was read, and not decided by a policy rule.
func batchDecisions(q *Question, in AnswerInput) ([]CallDecision, error) {
	const op = "answer"
	if len(in.Items) > 0 || len(in.Arguments) > 0 || in.Standing != nil {
		return nil, Errorf(CodeInvalid, op, "a batch is answered call by call (calls), or all at once with %q or %q", ApproveOption, DenyOption)
	}
	if len(in.Calls) > 0 {
		if in.OptionID != "" || in.Text != "" {
			return nil, Errorf(CodeInvalid, op, "give either calls or one option for every call, not both")
		}
		return in.Calls, nil
	}
	if in.OptionID != ApproveOption && in.OptionID != DenyOption {
		return nil, Errorf(CodeInvalid, op, "a batch is answered with %q or %q for every call, or call by call", ApproveOption, DenyOption)
	}
	var out []CallDecision
	for _, c := range q.UndecidedCalls() {
		out = append(out, CallDecision{ToolCallID: c.ToolCallID, OptionID: in.OptionID, Reason: in.Text})
	}
	return out, nil
}

// UndecidedCalls are the calls of batch q that a verdict for all decides
// ("approve all", "deny all"): none answered yet, none a policy rule
// decided. A door showing that verdict shows these.
func (q *Question) UndecidedCalls() []BatchCall {
	var out []BatchCall
	for _, c := range q.Calls {
		if _, done := q.Answered(c.ToolCallID); !done && !c.Rule.decides() {
			out = append(out, c)
		}
	}
	return out
}

// batchItems checks the decisions and turns them into item answers.
func batchItems(q *Question, ds []CallDecision, d Decider, now time.Time) ([]ItemAnswer, error) {
	const op = "answer"
	seen := map[string]bool{}
	out := make([]ItemAnswer, 0, len(ds))
	for _, cd := range ds {
		call, _, ok := q.batchCall(cd.ToolCallID)
		if !ok {
			return nil, Errorf(CodeInvalid, op, "tool call %q is not one of this batch's calls", cd.ToolCallID)
		}
		if seen[cd.ToolCallID] {
			return nil, Errorf(CodeInvalid, op, "tool call %q is decided twice", cd.ToolCallID)
		}
		seen[cd.ToolCallID] = true
		if prev, done := q.Answered(cd.ToolCallID); done {
			return nil, decidedFirst(op, fmt.Sprintf("tool call %q", cd.ToolCallID), "decided", prev)
		}
		if call.Rule.decides() {
			return nil, conflictOf(errDecidedFirst, op, "tool call %q: %s %s it: no person decides it", cd.ToolCallID, call.Rule.Label(), call.Rule.verb())
		}
		if cd.OptionID != ApproveOption && cd.OptionID != DenyOption {
			return nil, Errorf(CodeInvalid, op, "tool call %q is decided with %q or %q", cd.ToolCallID, ApproveOption, DenyOption)
		}
		if err := checkLen(op, "reason", cd.Reason, MaxReasonLen); err != nil {
			return nil, err
		}
		if err := checkOffer(q, call.Standing, cd.Standing, cd.OptionID == ApproveOption); err != nil {
			return nil, Errorf(CodeInvalid, op, "tool call %q: %s", cd.ToolCallID, ErrorMessage(err))
		}
		a := ItemAnswer{ItemID: cd.ToolCallID, OptionID: cd.OptionID, Text: strings.TrimSpace(cd.Reason), Decider: publicDecider(d), At: now}
		if len(cd.Arguments) > 0 {
			if cd.OptionID != ApproveOption {
				return nil, Errorf(CodeInvalid, op, "tool call %q: edited arguments go with %q", cd.ToolCallID, ApproveOption)
			}
			edit, err := editOf(&call.ToolCall, cd.Arguments)
			if err != nil {
				return nil, Errorf(CodeInvalid, op, "tool call %q: %s", cd.ToolCallID, ErrorMessage(err))
			}
			a.Edit = edit
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, conflictOf(errDecidedFirst, op, "every call of this batch is decided already")
	}
	return out, nil
}

// decidedFirst refuses an answer to a part (part names it: a form item,
// a batch's call) that prev answered first (verb says how), saying who
// did and when. Who is named by ActorText, the account, never by a
// display name: an agent's door (the API, MCP) reads the refusal
// unfenced (law 7), and a display name is anyone's to word.
func decidedFirst(op, part, verb string, prev ItemAnswer) error {
	return conflictOf(errDecidedFirst, op, "%s was already %s at %s by %s", part, verb, prev.At.Format(time.RFC3339), ActorText(prev.Decider))
}

// batchAnswerFor is AnswerFor on a batch: a call's own approve, deny or
// edit (Item is the call's index), or approve all and deny all (Item -1).
func batchAnswerFor(q *Question, r Ref, in AnswerInput, text string) (AnswerInput, error) {
	const op = "button"
	opt := ""
	switch r.Action {
	case RefApprove, RefEdit, RefStanding:
		opt = ApproveOption
	case RefDeny:
		opt = DenyOption
	default:
		return in, Errorf(CodeInvalid, op, "the button does not fit this question")
	}
	if r.Item == -1 {
		if r.Action == RefEdit || r.Action == RefStanding {
			return in, Errorf(CodeInvalid, op, "the button does not fit this question")
		}
		in.OptionID, in.Text = opt, text
		return in, nil
	}
	if r.Item >= len(q.Calls) {
		return in, Errorf(CodeInvalid, op, "the tool call does not exist")
	}
	cd := CallDecision{ToolCallID: q.Calls[r.Item].ToolCallID, OptionID: opt, Reason: text}
	if r.Action == RefStanding {
		cd.Standing = &StandingRequest{Scope: StandingRun}
		if r.Option == 1 {
			cd.Standing.Scope = StandingAgent
		}
	}
	if r.Action == RefEdit {
		if blank(text) {
			return in, Errorf(CodeInvalid, op, "the edited arguments are missing: send them as a JSON object")
		}
		cd.Reason, cd.Arguments = "", json.RawMessage(strings.TrimSpace(text))
	}
	in.Calls = []CallDecision{cd}
	return in, nil
}

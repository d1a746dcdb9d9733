package core

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/askbridge/askbridge/fence"
	"github.com/go-json-experiment/json/jsontext"
)

// approvalKind is one gated tool call, approved or denied, by one person
// or by a quorum's vote. Its features plug in here and nowhere else of
// the kind's: edited arguments (edit.go's editOf) and standing approvals
// (standing.go's checkStanding, granted after the close by
// Service.Answer) in its answer; their buttons in approvalButton.
var approvalKind = kind{
	ask:    checkApprovalAsk,
	button: approvalButton,
	takes:  answerFields{edits: true},
	answer: approvalAnswer,
	votes:  true,
	// An approval closes with its answer (edits and standing approvals
	// travel in its resolution), or by a quorum's vote.
	next: nextEveryFeature,
	resume: func(in *fence.ResumeInput, q *Question) {
		// However it closed, fence is told this is a gated call, so that
		// a resume without an approve says not to make it.
		in.Approval = true
		if q.State != StateAnswered {
			return
		}
		r := q.Resolution
		in.Structured.Approved = r.Approved
		in.Structured.ArgumentsSHA256 = r.VerdictSHA256() // fence words the verdict from these
		approvalResume(in, r)
	},
}

// VerdictSHA256 is the hash of the arguments an approval's verdict
// covers: the approved ones when an approver edited them, else those
// asked for. ArgumentsSHA256 keeps the asked call's hash (operators read
// it beside Edit); whatever tells an agent what was approved reads this,
// so that "approved, and the hash is mine" never holds for arguments an
// approver changed.
func (r *Resolution) VerdictSHA256() string {
	if r.Edit != nil {
		return r.Edit.ArgumentsSHA256
	}
	return r.ArgumentsSHA256
}

// checkApprovalAsk checks an approval: one tool call with its arguments
// and editable keys (a batch's calls are checkBatchAsk's).
func checkApprovalAsk(in AskInput) error {
	const op = "ask"
	if in.hasOptions() || in.hasItems() {
		return Errorf(CodeInvalid, op, "an approval takes a tool and arguments, not options or items")
	}
	if blank(in.Tool) {
		return Errorf(CodeInvalid, op, "tool is required for an approval")
	}
	if err := checkTool(op, "tool", in.Tool); err != nil {
		return err
	}
	if len(in.Arguments) == 0 {
		return Errorf(CodeInvalid, op, "arguments are required for an approval (use {} for none)")
	}
	if len(in.Arguments) > MaxArgumentsLen {
		return Errorf(CodeInvalid, op, "arguments are %d bytes; the limit is %d", len(in.Arguments), MaxArgumentsLen)
	}
	if _, err := CanonicalArguments(in.Arguments); err != nil {
		return Errorf(CodeInvalid, op, "%s", ErrorMessage(err))
	}
	if err := checkObject(op, "arguments", in.Arguments); err != nil {
		return err
	}
	return in.Editable.validate(in.Arguments)
}

// approvalButton reads an approval's buttons: approve, deny, approve
// with edited arguments, and approve with a standing approval for the run
// (option 0) or the agent (option 1). None names an item, and only the
// standing approval's names an option: a ref that does otherwise is no
// button of the card, altered or made up, and does not fit.
func approvalButton(q *Question, r Ref, in AnswerInput, text string) (AnswerInput, error) {
	if r.Item != -1 || r.Option != 0 && r.Action != RefStanding {
		return in, errNotFitting
	}
	switch {
	case r.Action == RefApprove:
		in.OptionID, in.Text = ApproveOption, text
	case r.Action == RefEdit:
		// The collected text is the edited arguments, as JSON.
		if blank(text) {
			return in, Errorf(CodeInvalid, "button", "the edited arguments are missing: send them as a JSON object")
		}
		in.OptionID, in.Arguments = ApproveOption, json.RawMessage(strings.TrimSpace(text))
	case r.Action == RefStanding && r.Option >= 0 && r.Option <= 1:
		in.OptionID, in.Text = ApproveOption, text
		in.Standing = &StandingRequest{Scope: StandingRun}
		if r.Option == 1 {
			in.Standing.Scope = StandingAgent
		}
	case r.Action == RefDeny:
		in.OptionID, in.Text = DenyOption, text
	default:
		return in, errNotFitting
	}
	return in, nil
}

// approvalAnswer reads approve or deny, with its reason, the hash the
// verdict covers, and the two features of an approve: edited arguments
// and a standing approval.
func approvalAnswer(q *Question, in AnswerInput, res Resolution) (Resolution, []ItemAnswer, error) {
	const op = "answer"
	if q.Rule.decides() {
		return res, nil, conflictOf(errDecidedFirst, op, "%s %s this call: no person decides it", q.Rule.Label(), q.Rule.verb())
	}
	var approved bool
	switch in.OptionID {
	case ApproveOption:
		approved = true
	case DenyOption:
	default:
		return res, nil, Errorf(CodeInvalid, op, "an approval is answered with %q or %q", ApproveOption, DenyOption)
	}
	if err := checkLen(op, "reason", in.Text, MaxReasonLen); err != nil {
		return res, nil, err
	}
	res.Approved, res.Reason = &approved, strings.TrimSpace(in.Text)
	res.ArgumentsSHA256 = q.Call.ArgumentsSHA256
	if q.Quorum > 1 && len(in.Arguments) > 0 {
		// A vote keeps its choice alone: the vote that reaches the quorum
		// would bring arguments no other voter approved.
		return res, nil, Errorf(CodeInvalid, op, "this approval needs %d people: it is approved as asked, with no edited arguments", q.Quorum)
	}
	if len(in.Arguments) > 0 {
		if !approved {
			return res, nil, Errorf(CodeInvalid, op, "edited arguments go with %q, not %q", ApproveOption, DenyOption)
		}
		edit, err := editOf(q.Call, in.Arguments)
		if err != nil {
			return res, nil, err
		}
		res.Edit = edit
	}
	if err := checkStanding(q, in.Standing, approved); err != nil {
		return res, nil, err
	}
	res.Grants = in.Standing
	return res, nil, nil
}

// checkObject refuses a tool call's arguments, valid JSON, that are not
// a JSON object: a tool takes named arguments, the MCP and hook doors
// take only an object, and editable keys and rules such as
// args.command need one. field names them ("arguments",
// "calls[1].arguments").
func checkObject(op, field string, raw json.RawMessage) error {
	k := jsontext.Value(raw).Kind()
	if k == '{' {
		return nil
	}
	got := map[jsontext.Kind]string{'[': "an array", '"': "a string", '0': "a number", 'n': "null", 't': "true", 'f': "false"}[k]
	return Errorf(CodeInvalid, op, "%s must be a JSON object (use {} for none), not %s", field, got)
}

// outOfRange finds a number in v, decoded with UseNumber, that a float64
// cannot hold: the JSON pointer to it and the number. Of an object's
// members it names the first by key, so the message is the same each
// time.
func outOfRange(v any) (at jsontext.Pointer, num string, bad bool) {
	switch v := v.(type) {
	case json.Number:
		_, err := strconv.ParseFloat(string(v), 64)
		return "", string(v), err != nil
	case []any:
		for i, e := range v {
			if p, n, ok := outOfRange(e); ok {
				return jsontext.Pointer("").AppendToken(strconv.Itoa(i)) + p, n, true
			}
		}
	case map[string]any:
		key := ""
		for k, e := range v {
			if p, n, ok := outOfRange(e); ok && (!bad || k < key) {
				key, at, num, bad = k, p, n, true
			}
		}
		if bad {
			at = jsontext.Pointer("").AppendToken(key) + at
		}
	}
	return at, num, bad
}

package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/askbridge/askbridge/fence"
)

// A batch is an approval of several tool calls at once (an agent's
// parallel calls), posted as one card. Each call is decided on its own,
// recorded through the chokepoint one step at a time the way a form's
// items are, and the batch closes once every call has an outcome. A
// timeout, decline, expiry or cancel closes the whole batch; calls still
// undecided then say so.

// Bounds of a batch.
const (
	MinBatchCalls = 2
	MaxBatchCalls = 20
)

// CallInput is one tool call of a batch ask.
type CallInput struct {
	ToolCallID string          `json:"tool_call_id"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"`
	// Editable lets approvers change this call's arguments (edit.go).
	Editable *Editable `json:"editable,omitempty"`
}

// BatchCall is one tool call of a batch as stored: like ToolCall, with
// the id that binds its outcome to the agent's call.
type BatchCall struct {
	ToolCallID string `json:"tool_call_id"`
	ToolCall
}

// CallDecision decides one call of a batch: ApproveOption or DenyOption,
// an optional reason, and for an approve, optionally edited arguments.
type CallDecision struct {
	ToolCallID string          `json:"tool_call_id"`
	OptionID   string          `json:"option_id"`
	Reason     string          `json:"reason,omitempty"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	// Standing, with an approve, also grants a standing approval for
	// this call's tool (standing.go).
	Standing *StandingRequest `json:"standing,omitempty"`
}

// IsBatch reports whether q is a batch of tool calls.
func (q *Question) IsBatch() bool { return len(q.Calls) > 0 }

// PartIDs are the ids of the parts of q that are answered one by one: a
// form's items, or a batch's tool call ids. Stores close q once every one
// has an answer.
func (q *Question) PartIDs() []string {
	ids := make([]string, 0, len(q.Items)+len(q.Calls))
	for _, it := range q.Items {
		ids = append(ids, it.ID)
	}
	for _, c := range q.Calls {
		ids = append(ids, c.ToolCallID)
	}
	return ids
}

// batchCall returns the call with the given tool call id and its index.
func (q *Question) batchCall(id string) (BatchCall, int, bool) {
	for i, c := range q.Calls {
		if c.ToolCallID == id {
			return c, i, true
		}
	}
	return BatchCall{}, -1, false
}

// validateCalls checks a batch ask's calls.
func validateCalls(calls []CallInput) error {
	const op = "ask"
	if len(calls) < MinBatchCalls || len(calls) > MaxBatchCalls {
		return Errorf(CodeInvalid, op, "a batch takes %d to %d tool calls, got %d", MinBatchCalls, MaxBatchCalls, len(calls))
	}
	seen := map[string]bool{}
	for i, c := range calls {
		field := fmt.Sprintf("calls[%d]", i)
		if err := checkID(op, field+".tool_call_id", c.ToolCallID, true); err != nil {
			return err
		}
		if seen[c.ToolCallID] {
			return Errorf(CodeInvalid, op, "%s.tool_call_id %q is used twice", field, c.ToolCallID)
		}
		seen[c.ToolCallID] = true
		if blank(c.Tool) {
			return Errorf(CodeInvalid, op, "%s.tool is required", field)
		}
		if err := checkLen(op, field+".tool", c.Tool, MaxToolLen); err != nil {
			return err
		}
		if len(c.Arguments) == 0 {
			return Errorf(CodeInvalid, op, "%s.arguments are required (use {} for none)", field)
		}
		if len(c.Arguments) > MaxArgumentsLen {
			return Errorf(CodeInvalid, op, "%s.arguments are %d bytes; the limit is %d", field, len(c.Arguments), MaxArgumentsLen)
		}
		if _, err := CanonicalArguments(c.Arguments); err != nil {
			return Errorf(CodeInvalid, op, "%s.%s", field, ErrorMessage(err))
		}
		if err := c.Editable.validate(c.Arguments); err != nil {
			return Errorf(CodeInvalid, op, "%s: %s", field, ErrorMessage(err))
		}
	}
	return nil
}

// batchCalls builds the stored calls of a batch ask.
func batchCalls(in []CallInput) ([]BatchCall, error) {
	out := make([]BatchCall, len(in))
	for i, c := range in {
		sum, canon, err := HashArguments(c.Arguments)
		if err != nil {
			return nil, err
		}
		out[i] = BatchCall{ToolCallID: c.ToolCallID, ToolCall: ToolCall{Tool: c.Tool, Arguments: canon, ArgumentsSHA256: sum}}
		if c.Editable.Any() {
			out[i].Editable = c.Editable
		}
	}
	return out, nil
}

// batchDecisions are the calls an answer decides: those it names, or
// with OptionID alone ("approve all", "deny all") every call still
// undecided when the question was read.
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
	for _, c := range q.Calls {
		if _, done := q.Answered(c.ToolCallID); !done {
			out = append(out, CallDecision{ToolCallID: c.ToolCallID, OptionID: in.OptionID, Reason: in.Text})
		}
	}
	return out, nil
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
			return nil, Errorf(CodeConflict, op, "tool call %q was already decided at %s by %s", cd.ToolCallID, prev.At.Format(time.RFC3339), DeciderLabel(prev.Decider))
		}
		if cd.OptionID != ApproveOption && cd.OptionID != DenyOption {
			return nil, Errorf(CodeInvalid, op, "tool call %q is decided with %q or %q", cd.ToolCallID, ApproveOption, DenyOption)
		}
		if err := checkLen(op, "reason", cd.Reason, MaxReasonLen); err != nil {
			return nil, err
		}
		if err := checkOffer(call.Standing, cd.Standing, cd.OptionID == ApproveOption); err != nil {
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
		return nil, Errorf(CodeConflict, op, "every call of this batch is decided already")
	}
	return out, nil
}

// batchTransition records the decisions; the store closes the batch
// (answered) once every call has one.
func (s *Service) batchTransition(q *Question, in AnswerInput, now time.Time) (Transition, error) {
	ds, err := batchDecisions(q, in)
	if err != nil {
		return Transition{}, err
	}
	items, err := batchItems(q, ds, in.Decider, now)
	if err != nil {
		return Transition{}, err
	}
	d := in.Decider
	res := &Resolution{State: StateAnswered, Decider: publicDecider(d), At: now}
	payload, _ := json.Marshal(map[string]any{"calls": itemIDs(items)})
	return Transition{
		Items:      items,
		Resolution: res,
		Event:      s.closeEvent(q, res, ""),
		ItemEvent: Event{QuestionID: q.ID, RunID: q.RunID, At: now, Kind: EventItemAnswered,
			Actor: s.pseudonym(d), Surface: d.Surface, Payload: payload},
	}, nil
}

// allRetries bounds how often "approve all" or "deny all" is tried again
// after another decision landed first: each try takes the calls still
// undecided, so every call ends with exactly one outcome.
const allRetries = 5

// resolveAll resolves an answer, and when it decides every undecided call
// of a batch at once and loses a call to a decision that landed first
// (the only conflict it can meet), tries again with the calls left.
func (s *Service) resolveAll(ctx context.Context, in AnswerInput, a attempt) (Outcome, error) {
	all := len(in.Calls) == 0 && (in.OptionID == ApproveOption || in.OptionID == DenyOption)
	for try := 0; ; try++ {
		o, err := s.resolve(ctx, a)
		if err == nil || !all || ErrorCode(err) != CodeConflict || try == allRetries {
			return o, err
		}
	}
}

// CallOutcome is one call's outcome as a batch stands: decided or not.
type CallOutcome struct {
	Call     BatchCall
	Decision *ItemAnswer
}

// CallOutcomes lists a batch's calls with their decisions, in order.
func CallOutcomes(q *Question) []CallOutcome {
	out := make([]CallOutcome, len(q.Calls))
	for i, c := range q.Calls {
		out[i].Call = c
		if a, ok := q.Answered(c.ToolCallID); ok {
			out[i].Decision = &a
		}
	}
	return out
}

// fenceCall is one call's outcome as the resume's data words it.
func fenceCall(co CallOutcome) fence.CallOutcome {
	fc := fence.CallOutcome{ToolCallID: co.Call.ToolCallID, ArgumentsSHA256: co.Call.ArgumentsSHA256}
	if a := co.Decision; a != nil {
		approved := a.OptionID == ApproveOption
		fc.Approved = &approved
		if e := a.Edit; e != nil {
			fc.Edited, fc.ApprovedArguments = true, e.Arguments
			fc.ArgumentsSHA256, fc.AskedArgumentsSHA256 = e.ArgumentsSHA256, e.AskedArgumentsSHA256
		}
	}
	return fc
}

// batchResume adds the calls' outcomes to a batch's resume.
func batchResume(in *fence.ResumeInput, q *Question) {
	for _, co := range CallOutcomes(q) {
		in.Structured.Calls = append(in.Structured.Calls, fenceCall(co))
	}
}

// CallResult is what one call of a closed batch resumes with: the fenced
// text bound to its tool call id, ready to hand back to the model as that
// call's tool result.
type CallResult struct {
	ToolCallID string
	Resume     fence.Resume
}

// CallResultsOf builds one result per call of a closed batch. A decided
// call reads as a person's decision (whatever closed the batch after
// it); an undecided one says it was not decided, in the words of how the
// batch closed.
func CallResultsOf(q *Question) ([]CallResult, error) {
	const op = "resume"
	verb, ok := verbs[q.State]
	if !ok || q.Resolution == nil || !q.IsBatch() {
		return nil, Errorf(CodeConflict, op, "question %s is %s: there is nothing to resume with yet", q.ID, q.State)
	}
	out := make([]CallResult, 0, len(q.Calls))
	for _, co := range CallOutcomes(q) {
		fc := fenceCall(co)
		in := fence.ResumeInput{QuestionID: q.ID, Verb: verb, Structured: fence.Structured{
			ToolCallID: fc.ToolCallID, Approved: fc.Approved, ArgumentsSHA256: fc.ArgumentsSHA256,
			Edited: fc.Edited, ApprovedArguments: fc.ApprovedArguments, AskedArgumentsSHA256: fc.AskedArgumentsSHA256,
		}}
		if a := co.Decision; a != nil {
			in.Verb, in.DeciderName, in.Reason = fence.VerbAnswered, DeciderLabel(a.Decider), a.Text
			if u := a.Standing; u != nil {
				in.Structured.Standing = &fence.StandingNote{ID: u.ID, GrantedAt: u.GrantedAt.UTC().Format(time.RFC3339)}
				in.DeciderName = DeciderLabel(u.GrantedBy)
			}
		} else {
			in.Structured.Undecided = true
			if q.Resolution.Decider.Surface != SurfaceSystem {
				in.DeciderName = DeciderLabel(q.Resolution.Decider)
			}
		}
		r, err := fence.BuildResume(in)
		if err != nil {
			return nil, Internal(op, err)
		}
		out = append(out, CallResult{ToolCallID: co.Call.ToolCallID, Resume: r})
	}
	return out, nil
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

// Labels of a batch card's own buttons.
const (
	LabelApproveAll = "Approve all"
	LabelDenyAll    = "Deny all"
)

// batchSections are a batch card's calls: each with its tool, arguments
// (as approved, once edited) and hash, its decision once made, and while
// open and undecided its own buttons, numbered like a form's.
func batchSections(q *Question) []Section {
	var out []Section
	for i, co := range CallOutcomes(q) {
		args, sum := co.Call.Arguments, co.Call.ArgumentsSHA256
		if d := co.Decision; d != nil && d.Edit != nil {
			args, sum = d.Edit.Arguments, d.Edit.ArgumentsSHA256
		}
		s := Section{Kind: SectionCall, Index: i, Title: co.Call.Tool, Body: prettyJSON(args)}
		if len(sum) >= hashShown {
			s.Hash = sum[:hashShown]
		}
		if d := co.Decision; d != nil {
			s.Answer = &ItemAnswered{Text: callVerdict(d), By: DeciderLabel(d.Decider), Surface: d.Decider.Surface, At: d.At}
		} else if q.Open() {
			num := fmt.Sprintf("%d. ", i+1)
			ref := Ref{QuestionID: q.ID, Item: i}
			ref.Action = RefApprove
			s.Actions = append(s.Actions, Action{Label: num + LabelApprove, Ref: ref, Style: StylePrimary})
			ref.Action = RefDeny
			s.Actions = append(s.Actions, Action{Label: num + LabelDeny, Ref: ref, Style: StyleDanger, Input: InputOptional})
			if co.Call.Editable.Any() {
				ref.Action = RefEdit
				s.Actions = append(s.Actions, Action{Label: num + LabelEditApprove, Ref: ref, Style: StyleDefault,
					Input: InputArguments, Prefill: s.Body})
			}
			if co.Call.Standing != nil {
				ref.Action = RefStanding
				s.Actions = append(s.Actions, Action{Label: num + LabelStandingRun, Ref: ref, Style: StyleDefault})
			}
		}
		out = append(out, s)
	}
	return out
}

// batchAllActions are "Approve all" and "Deny all": they decide every
// call still undecided.
func batchAllActions(q *Question) []Action {
	ref := Ref{QuestionID: q.ID, Item: -1, Action: RefApprove}
	all := []Action{{Label: LabelApproveAll, Ref: ref, Style: StylePrimary}}
	ref.Action = RefDeny
	return append(all, Action{Label: LabelDenyAll, Ref: ref, Style: StyleDanger, Input: InputOptional})
}

func batchProgress(q *Question) *FormProgress {
	return &FormProgress{Done: len(q.Answers), Total: len(q.Calls)}
}

// callVerdict is one decided call's verdict for people.
func callVerdict(a *ItemAnswer) string {
	switch {
	case a.OptionID == ApproveOption && a.Edit != nil:
		return "Approved with changes: " + ChangesLine(a.Edit)
	case a.OptionID == ApproveOption:
		return "Approved"
	}
	return "Denied"
}

// batchChoice is a closed batch's verdicts, one line per call.
func batchChoice(q *Question) string {
	var lines []string
	for i, co := range CallOutcomes(q) {
		v := "Not decided"
		if co.Decision != nil {
			v = callVerdict(co.Decision)
		}
		lines = append(lines, fmt.Sprintf("%d. %s: %s", i+1, co.Call.Tool, v))
	}
	return strings.Join(lines, "\n")
}

// batchNote is the private note after a click on a batch card.
func batchNote(q *Question, r Ref) string {
	p := batchProgress(q)
	if r.Item >= 0 && r.Item < len(q.Calls) {
		if a, ok := q.Answered(q.Calls[r.Item].ToolCallID); ok {
			note := fmt.Sprintf("Recorded (%s): %d. %s → %s", p, r.Item+1, q.Calls[r.Item].Tool, callVerdict(&a))
			if r.Action == RefStanding {
				note += "; later asks for " + q.Calls[r.Item].Tool + " by this agent in this run are approved at once"
			}
			return note
		}
	}
	if r.Action == RefDeny {
		return fmt.Sprintf("Recorded (%s): denied every call still undecided", p)
	}
	return fmt.Sprintf("Recorded (%s): approved every call still undecided", p)
}

// batchOffers sets what each call of a batch lets its approvers grant: a
// standing approval for the call's tool, on the terms of a single
// approval (never for a hard-to-reverse batch, nor on a route that
// forbids them).
func batchOffers(q *Question, route Route) {
	if q.Reversibility != Reversible || !route.StandingAllowed() {
		return
	}
	for i := range q.Calls {
		q.Calls[i].Standing = &StandingOffer{Hours: route.StandingHours}
	}
}

// batchCovered finds, per call of a just-built batch, a live standing
// approval that covers it.
func (s *Service) batchCovered(ctx context.Context, q *Question) (map[int]Standing, error) {
	if !q.IsBatch() || q.Calls[0].Standing == nil {
		return nil, nil
	}
	all, err := s.store.ListStandings(ctx, q.CreatedAt)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	covered := map[int]Standing{}
	for i, c := range q.Calls {
		if st := covering(all, q, c.ToolCall); st != nil {
			covered[i] = *st
		}
	}
	return covered, nil
}

// decideByStanding records the calls standing approvals cover, at once,
// through the chokepoint; the batch closes if they are all of them.
func (s *Service) decideByStanding(ctx context.Context, q *Question, covered map[int]Standing) (*Question, error) {
	o, err := s.resolve(ctx, attempt{op: "standing approval", id: q.ID, door: doorSystem, actor: System,
		build: func(q *Question, now time.Time) (Transition, error) {
			var items []ItemAnswer
			var last Decider
			for i, c := range q.Calls {
				st, ok := covered[i]
				if !ok {
					continue
				}
				d := publicDecider(st.GrantedBy)
				d.Name, last = StandingLabel(st), d
				items = append(items, ItemAnswer{ItemID: c.ToolCallID, OptionID: ApproveOption, Decider: d, At: now,
					Standing: &StandingUse{ID: st.ID, GrantedBy: publicDecider(st.GrantedBy), GrantedAt: st.GrantedAt}})
			}
			res := &Resolution{State: StateAnswered, Decider: last, At: now}
			payload, _ := json.Marshal(map[string]any{"calls": itemIDs(items), "standing": true})
			return Transition{Items: items, Resolution: res, Event: s.closeEvent(q, res, "every call covered by a standing approval"),
				ItemEvent: Event{QuestionID: q.ID, RunID: q.RunID, At: now, Kind: EventItemAnswered, Surface: SurfaceSystem,
					Reason: "covered by standing approvals", Payload: payload}}, nil
		}})
	if err != nil {
		return nil, err
	}
	return o.Question, nil
}

// grantCalls stores the standing approvals a batch's decisions asked for;
// like a single approval's, one that cannot be stored only means people
// are asked again.
func (s *Service) grantCalls(ctx context.Context, q *Question, ds []CallDecision) []Standing {
	var out []Standing
	for _, cd := range ds {
		if cd.Standing == nil {
			continue
		}
		call, _, ok := q.batchCall(cd.ToolCallID)
		a, done := q.Answered(cd.ToolCallID)
		if !ok || !done || a.OptionID != ApproveOption {
			continue
		}
		if st, err := s.grant(ctx, q, call.ToolCall, grantBy{Decider: a.Decider, At: a.At, Edit: a.Edit}, cd.Standing); err == nil {
			out = append(out, *st)
		}
	}
	return out
}

package core

import (
	"time"

	"github.com/askbridge/askbridge/fence"
)

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
		fc.DecidedBy, fc.Decider = closers[a.DecidedBy()], DeciderLabel(a.Decider)
		if u := a.Standing; u != nil {
			fc.Standing = &fence.StandingNote{ID: u.ID, GrantedAt: u.GrantedAt.UTC().Format(time.RFC3339)}
			fc.Decider = DeciderLabel(u.GrantedBy)
		}
		if a.Policy != nil {
			fc.Decider, fc.RuleReason = "", a.Text
		}
		if e := a.Edit; e != nil {
			fc.Edited, fc.ApprovedArguments = true, e.Arguments
			fc.ArgumentsSHA256, fc.AskedArgumentsSHA256 = e.ArgumentsSHA256, e.AskedArgumentsSHA256
		}
	}
	return fc
}

// batchResume adds the calls' outcomes, and who decided each, to a
// batch's resume.
func batchResume(in *fence.ResumeInput, q *Question) {
	for _, co := range CallOutcomes(q) {
		in.Structured.Calls = append(in.Structured.Calls, fenceCall(co))
	}
	in.People = people(q.Answers)
}

// CallResult is what one call of a closed batch resumes with: the fenced
// text bound to its tool call id, ready to hand back to the model as that
// call's tool result.
type CallResult struct {
	ToolCallID string
	Resume     fence.Resume
}

// CallResultsOf builds one result per call of a closed batch. A decided
// call reads as decided by whoever decided it, a person or a standing
// approval (whatever closed the batch after it); an undecided one says
// it was not decided, in the words of how the batch closed.
func CallResultsOf(q *Question) ([]CallResult, error) {
	const op = "resume"
	verb, ok := verbs[q.State]
	if !ok || q.Resolution == nil || !q.IsBatch() {
		return nil, Errorf(CodeConflict, op, "question %s is %s: there is nothing to resume with yet", q.ID, q.State)
	}
	closer := CloserOf(q)
	out := make([]CallResult, 0, len(q.Calls))
	for _, co := range CallOutcomes(q) {
		fc := fenceCall(co)
		in := fence.ResumeInput{QuestionID: string(q.ID), Verb: verb, Closer: closers[closer], Structured: fence.Structured{
			ToolCallID: fc.ToolCallID, Approved: fc.Approved, ArgumentsSHA256: fc.ArgumentsSHA256,
			Edited: fc.Edited, ApprovedArguments: fc.ApprovedArguments, AskedArgumentsSHA256: fc.AskedArgumentsSHA256,
		}}
		if a := co.Decision; a != nil {
			in.Verb, in.Closer, in.DeciderName, in.Reason = fence.VerbAnswered, fc.DecidedBy, fc.Decider, a.Text
			in.Structured.Standing = fc.Standing
		} else {
			in.Structured.Undecided = true
			in.DeciderName = deciderName(q.Resolution, closer)
			timeoutNote(&in, q, closer)
		}
		r, err := fence.BuildResume(in)
		if err != nil {
			return nil, Internal(op, err)
		}
		out = append(out, CallResult{ToolCallID: co.Call.ToolCallID, Resume: r})
	}
	return out, nil
}

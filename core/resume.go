package core

import (
	"github.com/askbridge/askbridge/fence"
)

// verbs maps a closed state to the trusted verb of its resume message.
var verbs = map[State]fence.Verb{
	StateAnswered:  fence.VerbAnswered,
	StateDeclined:  fence.VerbDeclined,
	StateTimedOut:  fence.VerbTimedOut,
	StateExpired:   fence.VerbExpired,
	StateCancelled: fence.VerbCancelled,
}

// ResumeOf builds what the agent resumes with once q has closed: the
// fenced text for its model and the structured result (law 7). Every
// human-written string (answer, reason, note, display name, form text)
// goes through fence; only the id and the verb are outside it. An open
// question has no resume and gets CodeConflict.
func ResumeOf(q *Question) (fence.Resume, error) {
	const op = "resume"
	verb, ok := verbs[q.State]
	if !ok || q.Resolution == nil {
		return fence.Resume{}, Errorf(CodeConflict, op, "question %s is %s: there is nothing to resume with yet", q.ID, q.State)
	}
	r := q.Resolution
	in := fence.ResumeInput{QuestionID: q.ID, Verb: verb, Reason: r.Reason}
	if r.Decider.Surface != SurfaceSystem {
		in.DeciderName = r.Decider.Name
		if in.DeciderName == "" {
			in.DeciderName = r.Decider.ID
		}
	}
	switch q.State {
	case StateAnswered:
		switch q.Kind {
		case KindClarification:
			in.Body = r.Answer
		case KindDecision:
			in.Body = r.Answer
			in.Structured.ChosenOptionID = r.OptionID
		case KindApproval:
			if q.IsBatch() {
				break // the calls' outcomes, below
			}
			in.Structured.Approved = r.Approved
			in.Structured.ArgumentsSHA256 = r.ArgumentsSHA256 // fence words the verdict from these
			approvalResume(&in, r)
		case KindForm:
			for _, a := range q.Answers {
				in.Items = append(in.Items, fence.ItemAnswer{ItemID: a.ItemID, OptionID: a.OptionID, Text: a.Text})
			}
		}
	case StateDeclined:
		// fence fences its own fixed decline text; a decline carries no
		// body and no reason of the decider's.
		in.Reason = ""
	}
	if q.IsBatch() {
		batchResume(&in, q)
	}
	for _, v := range q.Votes {
		in.Votes = append(in.Votes, fence.Vote{Name: DeciderLabel(v.Decider), Choice: v.Choice, Text: v.Text})
	}
	res, err := fence.BuildResume(in)
	if err != nil {
		return fence.Resume{}, Internal(op, err)
	}
	return res, nil
}

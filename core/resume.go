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
// goes through fence; only the id and the verb are outside it. The
// wording comes from who or what closed q (CloserOf) and who decided
// each of its parts (law 12). An open question has no resume and gets
// CodeConflict.
func ResumeOf(q *Question) (fence.Resume, error) {
	const op = "resume"
	verb, ok := verbs[q.State]
	if !ok || q.Resolution == nil {
		return fence.Resume{}, Errorf(CodeConflict, op, "question %s is %s: there is nothing to resume with yet", q.ID, q.State)
	}
	r := q.Resolution
	closer := CloserOf(q)
	in := fence.ResumeInput{QuestionID: string(q.ID), Verb: verb, Closer: closers[closer], Reason: r.Reason,
		DeciderName: deciderName(r, closer)}
	timeoutNote(&in, q, closer)
	if q.State == StateDeclined {
		// fence fences its own fixed decline text; a decline carries no
		// body and no reason of the decider's.
		in.Reason = ""
	}
	// The kind's own part: an answer's body or verdict, its parts.
	if k, ok := kindOf(q); ok && k.resume != nil {
		k.resume(&in, q)
	}
	for _, v := range q.CountedVotes() {
		in.Votes = append(in.Votes, fence.Vote{Name: DeciderLabel(v.Decider), Choice: v.Choice, Text: v.Text})
	}
	res, err := fence.BuildResume(in)
	if err != nil {
		return fence.Resume{}, Internal(op, err)
	}
	return res, nil
}

// deciderName is the display name of the person who acted on the
// question as a whole, where one did: who answered or declined it, the
// operator who withdrew it, who granted the standing approval that
// covered it. Voters and the deciders of parts are named with their
// votes and parts; the rest name nobody.
func deciderName(r *Resolution, c Closer) string {
	switch c {
	case CloserPerson, CloserDecline, CloserOperatorCancel:
		return DeciderLabel(r.Decider)
	case CloserStanding:
		if r.Standing != nil {
			return DeciderLabel(r.Standing.GrantedBy)
		}
	}
	return ""
}

// timeoutNote adds to a timeout's resume what the timeout policy did
// before it gave up: escalated the question, or asked again.
func timeoutNote(in *fence.ResumeInput, q *Question, c Closer) {
	if c != CloserTimeout {
		return
	}
	switch q.OnTimeout {
	case OnTimeoutEscalate:
		in.Escalated = q.Renotified > 0
	case OnTimeoutReask:
		in.Reasked = q.Renotified
	}
}

// people is how many different people (each once, however many accounts)
// answered parts.
func people(parts []ItemAnswer) int {
	seen := map[string]bool{}
	for _, a := range parts {
		if a.DecidedBy() == CloserPerson {
			seen[VoteKey(a.Decider)] = true
		}
	}
	return len(seen)
}

package hooks

import "github.com/askbridge/askbridge/core"

// Recovered is the decision for p when the hook command lost the door's
// answer (its own bound ran out first, or the connection broke while the
// answer was due) and then found q, p's question, closed, read as the
// asking agent's token reads it: its state, who closed it and any
// approve or deny, but no person's words (law 11).
//
// Only a deny is recovered. Lost, it would become what a server out of
// reach gets (FailedAsk): for Codex's PreToolUse nothing, which leaves a
// call a person refused to Codex's own approval policy. The deny is the
// one a re-run of the hook would get (decide, not ours: a withdrawal
// whose maker the record cannot prove denies Codex's PreToolUse), worded
// from the recorded closer, but for a reason, which the agent's view
// does not carry: it is said to be left out, not said to be absent. An
// allow is not recovered: the command cannot make the door's checks
// before one is handed over (the token still holds, the arguments an
// approver edited, the standing approval stored), so the host falls back
// as for no decision, and its person or its own policy decides.
func Recovered(p Prompt, q *core.Question) Decision {
	if q == nil || q.Open() || q.Resolution == nil {
		return Decision{Verdict: NoDecision}
	}
	d := decide(p, q, false, nil)
	if d.Verdict != Deny {
		return Decision{Verdict: NoDecision}
	}
	if q.State == core.StateAnswered {
		who, _, _ := denier(q)
		d.Message = who + ". The hook did not receive askbridge's whole answer in time, so any reason given is not included."
	}
	return d
}

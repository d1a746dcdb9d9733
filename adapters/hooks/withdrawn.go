package hooks

import "github.com/askbridge/askbridge/core"

// decide is Decide for the door, which knows whether its own withdrawal
// closed q (ours: its wait ran out, or askbridge is stopping). A Codex
// PreToolUse prompt whose question the asking agent withdrew otherwise
// (over the API, MCP or the CLI, with the token the model's shell
// holds) is denied: Codex reads no decision as leaving the call to its
// own approval policy, which may run it unasked, so the agent's cancel
// would get the call past the person about to decide it, as ending its
// run would (expiredDenies). One found already withdrawn when a re-run
// of the hook asks again is denied too: the record may name askbridge's
// own hook (hookWithdrawals), but the agent can cancel with the same
// words, so the deny stands either way; only its wording follows the
// record (withdrawnMessage).
func decide(p Prompt, q *core.Question, ours bool, covered Covered) Decision {
	if !ours && p.Host == Codex && p.Event == PreToolUse && q != nil && q.State == core.StateCancelled && core.CloserOf(q) == core.CloserAgentCancel {
		return Decision{Verdict: Deny, Message: withdrawnMessage(q)}
	}
	return Decide(p, q, covered)
}

// hookWithdrawals say, for each reason askbridge's own hook (the door, or
// the hook command) withdraws its question with, when it did so. The
// hook withdraws as the agent it asks for, so the record names that
// agent as the canceller (core.CloserAgentCancel) and only the reason
// tells the hook's withdrawal from the agent's own.
var hookWithdrawals = map[string]string{
	reasonGaveUp:      "when its wait for an answer ran out",
	reasonStopping:    "as it was stopping",
	ReasonHostStopped: "when the host stopped waiting for it",
	ReasonNoDecision:  "when its hook command got no decision in time",
}

// withdrawnMessage is what the model is told of a call denied because
// its question was withdrawn (decide), worded from the record (law 12):
// askbridge's hook, for a withdrawal with one of its own reasons, else
// the agent. Server text only: the agent's reason is not repeated.
func withdrawnMessage(q *core.Question) string {
	if when, ok := hookWithdrawals[q.Resolution.Reason]; ok {
		return "askbridge withdrew the question about this call " + when + ", before anyone decided it, so it is not run."
	}
	return "The agent withdrew the askbridge question about this call before anyone decided it, so it is not run."
}

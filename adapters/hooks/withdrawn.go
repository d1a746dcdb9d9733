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
// of the hook asks again is denied too, whoever withdrew it: askbridge
// (the door, recorded as core.CloserBridgeCancel) or the agent, whose
// cancel may be askbridge's own hook command's (commandWithdrawals) or
// carry its words; only its wording follows the record
// (withdrawnMessage).
func decide(p Prompt, q *core.Question, ours bool, covered Covered) Decision {
	if !ours && p.Host == Codex && p.Event == PreToolUse && q != nil && q.State == core.StateCancelled && withdrawnForAgent(q) {
		return Decision{Verdict: Deny, Message: withdrawnMessage(q)}
	}
	return Decide(p, q, covered)
}

// withdrawnForAgent reports whether q was withdrawn by its asking agent
// or by askbridge for it, rather than by an operator.
func withdrawnForAgent(q *core.Question) bool {
	c := core.CloserOf(q)
	return c == core.CloserAgentCancel || c == core.CloserBridgeCancel
}

// hostStoppedWhen is when a hook's question was withdrawn with
// ReasonHostStopped, by the door or by the hook command.
const hostStoppedWhen = "when the host stopped waiting for it"

// doorWithdrawals say, for each reason the door withdraws its question
// with, when it did so. The door withdraws as askbridge, so its record
// says so (core.CloserBridgeCancel); the reason only says when.
var doorWithdrawals = map[string]string{
	reasonGaveUp:      "when its wait for an answer ran out",
	reasonStopping:    "as it was stopping",
	ReasonHostStopped: hostStoppedWhen,
}

// commandWithdrawals say the same for the "askbridge hook" command,
// which withdraws over the API with the agent's token: its record names
// the agent as the canceller (core.CloserAgentCancel), and only the
// reason tells the command's withdrawal from the agent's own.
var commandWithdrawals = map[string]string{
	ReasonHostStopped: hostStoppedWhen,
	ReasonNoDecision:  "when its hook command got no decision in time",
}

// withdrawnMessage is what the model is told of a call denied because
// its question was withdrawn (decide), worded from the record (law 12):
// askbridge, for the door's withdrawal (its closer) or the hook
// command's (its reasons), else the agent. Server text only: the
// agent's reason is not repeated.
func withdrawnMessage(q *core.Question) string {
	var reason string
	if q.Resolution != nil {
		reason = q.Resolution.Reason
	}
	if core.CloserOf(q) == core.CloserBridgeCancel {
		// The agent's view of the record (Recovered) carries no reason:
		// who withdrew it is still known, when is not.
		if when, ok := doorWithdrawals[reason]; ok {
			return "askbridge withdrew the question about this call " + when + ", before anyone decided it, so it is not run."
		}
		return "askbridge withdrew the question about this call before anyone decided it, so it is not run."
	}
	if when, ok := commandWithdrawals[reason]; ok {
		return "askbridge withdrew the question about this call " + when + ", before anyone decided it, so it is not run."
	}
	return "The agent withdrew the askbridge question about this call before anyone decided it, so it is not run."
}

package hooks

import (
	"encoding/json"
	"strings"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// Verdict is what the host is told.
type Verdict string

// The verdicts.
const (
	// Allow runs the call (with Decision.UpdatedInput, when set).
	Allow Verdict = "allow"
	// Deny refuses it, with a message for the model.
	Deny Verdict = "deny"
	// NoDecision leaves the prompt to the host, which asks the person at
	// the keyboard as if no hook had run.
	NoDecision Verdict = "none"
)

// Decision is a closed question read as the host's answer.
type Decision struct {
	Verdict Verdict
	// Message is what the model is told of a deny: server text, with the
	// person's reason inside a fence.
	Message string
	// UpdatedInput replaces the tool input of an allow (Claude Code only).
	UpdatedInput json.RawMessage
}

// Decide reads q, the question p was asked as, as the host's answer.
// Only an approve or a deny (by people, a quorum or a standing approval)
// decides; a decline, a timeout, an expiry, a cancel or a question still
// open leaves the prompt to the host.
func Decide(p Prompt, q *core.Question) Decision {
	none := Decision{Verdict: NoDecision}
	if q == nil || q.Open() || q.State != core.StateAnswered || q.Resolution == nil || q.Resolution.Approved == nil {
		return none
	}
	res := q.Resolution
	if !*res.Approved {
		return Decision{Verdict: Deny, Message: denyMessage(q, res.Reason)}
	}
	if res.Edit != nil {
		if !p.Editable() || len(res.Edit.Arguments) == 0 {
			// The approver approved other arguments than the host can run;
			// the host's own prompt is the honest fallback.
			return none
		}
		return Decision{Verdict: Allow, UpdatedInput: res.Edit.Arguments}
	}
	return Decision{Verdict: Allow}
}

// denyMessage tells the model who refused the call, worded from the
// recorded closer (law 12): a person (or several, by quorum), or a policy
// rule no person looked at. The reason (a person's words, or an
// operator's rule text) stays inside a fence.
func denyMessage(q *core.Question, reason string) string {
	who, whose := "A person denied this tool call in askbridge", "Their"
	switch core.CloserOf(q) {
	case core.CloserPolicy:
		who, whose = "An askbridge policy rule denied this tool call; no person looked at it", "Its"
	case core.CloserQuorum:
		who = "The people asked in askbridge denied this tool call"
	}
	if strings.TrimSpace(reason) == "" {
		return who + ", with no reason."
	}
	return who + ". " + whose + " reason:\n" + fence.Wrap(fence.TagReason, reason).String()
}

// noDecisionReason is what Claude Code's PreToolUse "ask" shows the person
// at the keyboard.
const noDecisionReason = "askbridge got no approval from chat; decide here."

// Output is the hook's stdout (or HTTP response body) for d: nil for no
// decision where the host reads an empty output that way. The exit code is
// 0 in every case.
func Output(p Prompt, d Decision) ([]byte, error) {
	if p.Event == PreToolUse {
		return preToolUseOutput(p, d)
	}
	if d.Verdict == NoDecision {
		// Both hosts show their own prompt when a PermissionRequest hook
		// exits 0 with nothing on stdout.
		return nil, nil
	}
	dec := permissionDecision{Behavior: string(d.Verdict)}
	switch d.Verdict {
	case Deny:
		dec.Message = d.Message
	case Allow:
		if p.Editable() {
			dec.UpdatedInput = d.UpdatedInput
		}
	}
	return json.Marshal(permissionOutput{HookSpecificOutput: permissionSpecific{HookEventName: string(PermissionRequest), Decision: dec}})
}

// preToolUseOutput is Claude Code's PreToolUse answer (Parse refuses
// Codex's). No decision is "ask": an empty output would let the host's
// permission rules run the call unasked, which is not what a team that
// hooked every call wants.
func preToolUseOutput(p Prompt, d Decision) ([]byte, error) {
	out := preToolUseSpecific{HookEventName: string(PreToolUse)}
	switch d.Verdict {
	case Allow:
		out.PermissionDecision = "allow"
		out.PermissionDecisionReason = "Approved in askbridge."
		out.UpdatedInput = d.UpdatedInput
	case Deny:
		out.PermissionDecision = "deny"
		out.PermissionDecisionReason = d.Message
	default:
		out.PermissionDecision = "ask"
		out.PermissionDecisionReason = noDecisionReason
	}
	return json.Marshal(preToolUseOutputWire{HookSpecificOutput: out})
}

type permissionOutput struct {
	HookSpecificOutput permissionSpecific `json:"hookSpecificOutput"`
}

type permissionSpecific struct {
	HookEventName string             `json:"hookEventName"`
	Decision      permissionDecision `json:"decision"`
}

type permissionDecision struct {
	Behavior     string          `json:"behavior"`
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	Message      string          `json:"message,omitempty"`
}

type preToolUseOutputWire struct {
	HookSpecificOutput preToolUseSpecific `json:"hookSpecificOutput"`
}

type preToolUseSpecific struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
}

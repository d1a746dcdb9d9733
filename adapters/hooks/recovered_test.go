package hooks

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// TestRecoveredHandsOverOnlyADeny: what the hook command recovers of a
// question whose answer it lost is a deny, for every host and event, and
// only a deny (an allow it cannot check as the door does): a person's, a
// rule's or a quorum's, worded from who closed it without claiming there
// was no reason, which the agent's view of the question does not carry;
// and, for Codex's PreToolUse, the deny a re-run gets for an expiry or a
// withdrawal, worded from who withdrew it. Each passes its host's pinned
// schema.
func TestRecoveredHandsOverOnlyADeny(t *testing.T) {
	no, yes := approved(false), approved(true)
	cancelled := func(by core.Closer, reason string) *core.Question {
		return closed(core.StateCancelled, &core.Resolution{State: core.StateCancelled, ClosedBy: by, Reason: reason})
	}
	outcomes := []struct {
		name       string
		q          *core.Question
		deny       string // the deny's start; "" for none
		codexPreOf bool   // a deny only for Codex's PreToolUse, as a re-run's
	}{
		{"person deny", closed(core.StateAnswered, &core.Resolution{State: core.StateAnswered, ClosedBy: core.CloserPerson, Approved: no}), "A person denied this tool call in askbridge. ", false},
		{"policy deny", closed(core.StateAnswered, &core.Resolution{State: core.StateAnswered, ClosedBy: core.CloserPolicy, Approved: no}), "An askbridge policy rule denied this tool call; no person looked at it. ", false},
		{"quorum deny", closed(core.StateAnswered, &core.Resolution{State: core.StateAnswered, ClosedBy: core.CloserQuorum, Approved: no}), "The people asked in askbridge denied this tool call. ", false},
		{"expiry", closed(core.StateExpired, &core.Resolution{State: core.StateExpired, ClosedBy: core.CloserExpiry}), "askbridge got no answer about this call", true},
		{"the agent's withdrawal", cancelled(core.CloserAgentCancel, "never mind"), "The agent withdrew", true},
		{"the door's withdrawal", cancelled(core.CloserBridgeCancel, ""), "askbridge withdrew the question about this call before anyone decided it", true},
		{"the agent's withdrawal in the door's words", cancelled(core.CloserAgentCancel, reasonGaveUp), "The agent withdrew", true},
		{"the command's withdrawal", cancelled(core.CloserAgentCancel, ReasonNoDecision), "askbridge withdrew the question about this call when its hook command", true},
		{"host stopped", cancelled(core.CloserAgentCancel, ReasonHostStopped), "askbridge withdrew the question about this call when the host", true},
		{"operator's withdrawal", cancelled(core.CloserOperatorCancel, ""), "", false},
		{"approve", closed(core.StateAnswered, &core.Resolution{State: core.StateAnswered, ClosedBy: core.CloserPerson, Approved: yes}), "", false},
		{"decline", closed(core.StateDeclined, &core.Resolution{State: core.StateDeclined, ClosedBy: core.CloserDecline}), "", false},
		{"timeout", closed(core.StateTimedOut, &core.Resolution{State: core.StateTimedOut, ClosedBy: core.CloserTimeout, Approved: no}), "", false},
		{"open", &core.Question{State: core.StateOpen}, "", false},
		{"unread", nil, "", false},
	}
	for _, fx := range bashPrompts(t) {
		p := fx.prompt
		for _, o := range outcomes {
			t.Run(fx.name+"/"+o.name, func(t *testing.T) {
				d := Recovered(p, o.q)
				want := o.deny
				if o.codexPreOf && (p.Host != Codex || p.Event != PreToolUse) {
					want = ""
				}
				if want == "" {
					if d.Verdict != NoDecision {
						t.Fatalf("recovered %+v; want no decision", d)
					}
					return
				}
				if d.Verdict != Deny || !strings.HasPrefix(d.Message, want) || strings.Contains(d.Message, "with no reason") {
					t.Fatalf("recovered %+v; want a deny saying %q, not that no reason was given", d, want)
				}
				out, err := Output(p, d)
				if err != nil {
					t.Fatal(err)
				}
				validate(t, fx.schema, out)
			})
		}
	}
}

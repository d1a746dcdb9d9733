package hooks

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// TestWithdrawnSaysWhoWithdrew: a Codex PreToolUse prompt found
// withdrawn (a re-run of its hook, or the door woken by a cancel not its
// own) is denied, and the deny is worded from the recorded withdrawal
// (law 12): askbridge's, for the door's (its closer, with when its reason
// says) and for the hook command's (which cancels with the agent's token:
// its reasons), the agent's otherwise, even in the door's words. Before,
// every one read "The agent withdrew", askbridge's own too, and then the
// door's own reasons were matched whoever cancelled. Each answer passes
// Codex's pinned schema.
func TestWithdrawnSaysWhoWithdrew(t *testing.T) {
	p, err := Parse(Codex, fixture(t, "codex/pre-tool-use.bash.json"))
	if err != nil {
		t.Fatal(err)
	}
	sc := schema(t, "codex/pre-tool-use.command.output.schema.json")
	const agents = "The agent withdrew the askbridge question about this call"
	bridge, agent := core.CloserBridgeCancel, core.CloserAgentCancel
	for _, c := range []struct {
		by           core.Closer
		reason, want string
	}{
		{bridge, reasonGaveUp, "askbridge withdrew the question about this call when its wait for an answer ran out"},
		{bridge, reasonStopping, "askbridge withdrew the question about this call as it was stopping"},
		{bridge, ReasonHostStopped, "askbridge withdrew the question about this call when the host stopped waiting for it"},
		{bridge, "", "askbridge withdrew the question about this call before anyone decided it"},
		{agent, ReasonHostStopped, "askbridge withdrew the question about this call when the host stopped waiting for it"},
		{agent, ReasonNoDecision, "askbridge withdrew the question about this call when its hook command got no decision in time"},
		{agent, reasonGaveUp, agents},
		{agent, reasonStopping, agents},
		{agent, "never mind", agents},
		{agent, "", agents},
	} {
		t.Run(string(c.by)+"/"+c.reason, func(t *testing.T) {
			q := closed(core.StateCancelled, &core.Resolution{State: core.StateCancelled, ClosedBy: c.by, Reason: c.reason})
			out, err := Output(p, decide(p, q, false, nil))
			if err != nil {
				t.Fatal(err)
			}
			validate(t, sc, out)
			var got preToolUseOutputWire
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			h := got.HookSpecificOutput
			if h.PermissionDecision != "deny" || !strings.HasPrefix(h.PermissionDecisionReason, c.want) || !strings.HasSuffix(h.PermissionDecisionReason, "so it is not run.") {
				t.Fatalf("answer %s; want a deny saying %q", out, c.want)
			}
			if c.want != agents && strings.Contains(h.PermissionDecisionReason, "agent") {
				t.Fatalf("askbridge's own withdrawal reads %q: it names the agent", h.PermissionDecisionReason)
			}
		})
	}
}

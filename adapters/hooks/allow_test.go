package hooks

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// TestPreToolUseAllowSaysWhoAllowed: the reason Claude Code shows the
// person at the keyboard with a PreToolUse allow is worded from the
// recorded closer (law 12), as a deny's message is: a policy rule or a
// standing approval that allowed the call with nobody asked does not
// read as a person's approval. Before, every allow read "Approved in
// askbridge.", a rule's as a person's.
func TestPreToolUseAllowSaysWhoAllowed(t *testing.T) {
	p, err := Parse(ClaudeCode, fixture(t, "claude-code/pre-tool-use.bash.json"))
	if err != nil {
		t.Fatal(err)
	}
	allowed := func(closer core.Closer) *core.Question {
		q := closed(core.StateAnswered, &core.Resolution{State: core.StateAnswered, Approved: approved(true), ClosedBy: closer})
		if closer == core.CloserQuorum {
			q.Quorum = 2
		}
		return q
	}
	edited := allowed(core.CloserPerson)
	edited.Resolution.Edit = &core.ArgumentEdit{Arguments: json.RawMessage(`{"command":"npm test -- --bail"}`)}
	for _, c := range []struct {
		name   string
		q      *core.Question
		want   string
		notSay string // what the reason must not say
	}{
		{"a person", allowed(core.CloserPerson), "A person approved this tool call in askbridge.", ""},
		{"a person, with changes", edited, "A person approved this tool call in askbridge, with changes.", ""},
		{"a quorum", allowed(core.CloserQuorum), "The people asked in askbridge approved this tool call.", ""},
		{"a policy rule", allowed(core.CloserPolicy), "An askbridge policy rule allowed this tool call; no person looked at it.", "approved"},
		{"a standing approval", allowed(core.CloserStanding), "A standing approval in askbridge allowed this tool call; nobody was asked about it.", "approved this"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := Output(p, Decide(p, c.q, nil))
			if err != nil {
				t.Fatal(err)
			}
			validate(t, schema(t, "claude-code/pre-tool-use.output.schema.json"), out)
			var got preToolUseOutputWire
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			r := got.HookSpecificOutput
			if r.PermissionDecision != "allow" || r.PermissionDecisionReason != c.want {
				t.Errorf("%s %q; want allow and %q", r.PermissionDecision, r.PermissionDecisionReason, c.want)
			}
			if c.notSay != "" && strings.Contains(r.PermissionDecisionReason, c.notSay) {
				t.Errorf("the reason %q says %q", r.PermissionDecisionReason, c.notSay)
			}
		})
	}
}

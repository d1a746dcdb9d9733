package hooks_test

import (
	"context"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// Both hosts run subagents inside one session: Claude Code's Task
// subagents and Codex's thread-spawned ones share the session's
// session_id, and tell themselves apart only by agent_id (testdata/SOURCES).

// TestHookSubagentsPromptsAreTheirOwn: the same command prompted for at
// once by two subagents of one session (or by a subagent and the main
// thread) is two prompts, each with a question of its own, and one
// answer approves only the prompt it was given for. Before, a prompt
// without a tool_use_id was known by a digest that left agent_id out, so
// both shared one question, and the person's one approve ran the command
// twice. The host's agent_id is no askbridge agent: whoever's token made
// the call asks, whatever agent_id names.
func TestHookSubagentsPromptsAreTheirOwn(t *testing.T) {
	for _, c := range []struct {
		path, fixture string
	}{
		{"/v1/hooks/claude-code", "claude-code/permission-request.subagent.json"},
		{"/v1/hooks/codex", "codex/permission-request.subagent.json"},
	} {
		t.Run(c.path, func(t *testing.T) {
			d := newDoor(t)
			main := hookInput(t, c.fixture, map[string]string{"agent_id": "null", "agent_type": "null"})
			other := hookInput(t, c.fixture, map[string]string{"agent_id": `"ops-bot"`})
			sub := d.start(t.Context(), c.path, hookFixture(t, c.fixture))
			ctxOther, cancelOther := context.WithCancel(t.Context())
			second := d.start(ctxOther, c.path, other)
			ctxMain, cancelMain := context.WithCancel(t.Context())
			root := d.start(ctxMain, c.path, main)
			if sub.id == "" || second.id == sub.id || root.id == sub.id || root.id == second.id {
				t.Fatalf("the subagents' and the main thread's prompts parked %s, %s and %s; want three questions", sub.id, second.id, root.id)
			}
			q, err := d.svc.Get(t.Context(), sub.id)
			if err != nil {
				t.Fatal(err)
			}
			if q.Agent != agent {
				t.Fatalf("asked as agent %q; want %q, whose token made the call", q.Agent, agent)
			}
			if !strings.Contains(q.Context, "Subagent: ") {
				t.Errorf("the card's context %q does not say which subagent asked", q.Context)
			}
			if err := d.answer(sub.id, core.AnswerInput{OptionID: core.ApproveOption}); err != nil {
				t.Fatal(err)
			}
			if got := sub.body(t); !strings.Contains(got, `"behavior":"allow"`) {
				t.Fatalf("the approved prompt heard %s; want an allow", got)
			}
			for _, c := range []struct {
				call   call
				cancel context.CancelFunc
			}{{second, cancelOther}, {root, cancelMain}} {
				if got := d.withdrawn(c.call, c.cancel); got.State != core.StateCancelled {
					t.Errorf("the other prompt's question was %s before its caller left; want it open until then", got.State)
				}
			}
		})
	}
}

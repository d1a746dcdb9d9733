package core_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestAskRuleTimeoutOnAHostPrompt: an ask rule's timeout replaces the
// asker's, except that a host's own permission prompt keeps a shorter
// one: its hook stops waiting then, so a rule's two hours put a deadline
// on its cards that nobody waited for. A rule's shorter timeout still
// wins on a host prompt too.
func TestAskRuleTimeoutOnAHostPrompt(t *testing.T) {
	for _, c := range []struct {
		name       string
		rule, mine time.Duration
		host       bool
		want       time.Duration
	}{
		{"an agent's ask takes the rule's", 2 * time.Hour, 5 * time.Minute, false, 2 * time.Hour},
		{"a host prompt keeps its shorter wait", 2 * time.Hour, 5 * time.Minute, true, 5 * time.Minute},
		{"a host prompt takes a shorter rule's", time.Minute, 5 * time.Minute, true, time.Minute},
		{"a host prompt with no timeout of its own takes the rule's", 2 * time.Hour, 0, true, 2 * time.Hour},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc, err := core.New(coretest.OpenStore(t), ruledConfig(core.Rule{When: `tool == "bash"`, Decide: core.DecideAsk, Timeout: c.rule}), nil)
			if err != nil {
				t.Fatal(err)
			}
			q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", Text: "Run?",
				Tool: "bash", Arguments: json.RawMessage(`{"cmd":"ls"}`), Reversibility: core.Reversible,
				Timeout: c.mine, HostPrompt: c.host})
			if err != nil {
				t.Fatal(err)
			}
			if time.Duration(q.Timeout) != c.want {
				t.Fatalf("timeout %s, want %s", q.Timeout, c.want)
			}
		})
	}
}

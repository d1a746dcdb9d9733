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

// TestHostPromptRepeatWithAnotherWait: a host's permission prompt asked
// again while its question is open finds that question even when the
// hook's wait, its timeout, differs (another hook, a reload): the wait
// is the door's, not part of what was asked. Before, the repeat was a
// conflict, and the host fell back to its own prompt.
func TestHostPromptRepeatWithAnotherWait(t *testing.T) {
	svc, err := core.New(coretest.OpenStore(t), ruledConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	in := core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", Text: "Run?", ToolCallID: "toolu_01",
		Tool: "bash", Arguments: json.RawMessage(`{"cmd":"ls"}`), Reversibility: core.HardToReverse,
		Timeout: 5 * time.Minute, HostPrompt: true}
	first, err := svc.Ask(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	in.Timeout = 2 * time.Minute
	again, err := svc.Ask(t.Context(), in)
	if err != nil || again.ID != first.ID {
		t.Fatalf("the repeat: %v, %v; want question %s back", again, err, first.ID)
	}
	// An agent's own ask is held to its word: another timeout is another ask.
	in.HostPrompt, in.ToolCallID, in.Timeout = false, "toolu_02", 5*time.Minute
	if _, err := svc.Ask(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	in.Timeout = 2 * time.Minute
	if _, err := svc.Ask(t.Context(), in); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("an agent's repeat with another timeout: %v; want a conflict", err)
	}
}

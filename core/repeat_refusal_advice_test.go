package core_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestRefusedRepeatSaysWhichIDToRenew: a repeat whose body differs is
// refused with advice the agent can follow. A tool call id wins over any
// Idempotency-Key, so under a tool call id the advice is a new
// tool_call_id (before, "a new key", which got the same 409); under a key
// alone it stays a new key.
func TestRefusedRepeatSaysWhichIDToRenew(t *testing.T) {
	ctx := t.Context()
	svc, _ := coretest.Open(t, coretest.Options{})
	ask := func(call, key, text string) error {
		_, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "agent-a", RunID: "r1", Text: text,
			Reversibility: core.Reversible, ToolCallID: call, IdempotencyKey: key})
		return err
	}
	refused := func(what string, err error, advice, not string) {
		t.Helper()
		msg := core.ErrorMessage(err)
		if core.ErrorCode(err) != core.CodeConflict || !strings.Contains(msg, advice) || strings.Contains(msg, not) {
			t.Errorf("%s with a different body: %v; want a conflict advising a %s", what, err, advice)
		}
	}
	if err := ask("t1", "k1", "Which?"); err != nil {
		t.Fatal(err)
	}
	// What the old advice said to do: the same call under a new key.
	refused("tool call t1 under a new key", ask("t1", "k2", "Which one?"), "new tool_call_id", "new key")
	if err := ask("", "k3", "Which?"); err != nil {
		t.Fatal(err)
	}
	refused("key k3", ask("", "k3", "Which one?"), "new key", "tool_call_id")
}

package hooks

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// TestFailedAskNamesAUsageError: a hook command written wrong (a bad
// flag, a stray argument) is answered, on Claude Code's PreToolUse, with
// a reason that says the hook command is at fault, what was wrong and
// how it is written, for the person at the keyboard to fix the host's
// settings. Codex is not told: a usage error is not askbridge refusing
// the call, so the hook fails (exit 1) as before and Codex decides.
// Before, the reason read "internal error".
func TestFailedAskNamesAUsageError(t *testing.T) {
	err := &Usage{Synopsis: "hook --host claude-code|codex [--route R] [--wait D]", Err: errors.New("flag provided but not defined: -wiat")}
	out, ok := FailedAsk(Prompt{Host: ClaudeCode, Event: PreToolUse}, err)
	if !ok {
		t.Fatal("Claude Code's PreToolUse got no answer")
	}
	var got preToolUseOutputWire
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	r := got.HookSpecificOutput
	for _, want := range []string{"usage error", "askbridge hook command", "flag provided but not defined: -wiat",
		"askbridge hook --host claude-code|codex [--route R] [--wait D]"} {
		if r.PermissionDecision != "ask" || !strings.Contains(r.PermissionDecisionReason, want) {
			t.Errorf("%s %q, want ask and %q in the reason", r.PermissionDecision, r.PermissionDecisionReason, want)
		}
	}
	if strings.Contains(r.PermissionDecisionReason, "internal error") {
		t.Errorf("the reason %q says internal error", r.PermissionDecisionReason)
	}
	if out, ok := FailedAsk(Prompt{Host: Codex, Event: PreToolUse}, err); ok {
		t.Errorf("Codex was told %s; want no answer (exit 1)", out)
	}
	if c := core.ErrorCode(err); c == core.CodeInvalid || c == core.CodeConflict {
		t.Errorf("a usage error's code is %s, which denies on Codex", c)
	}
}

package hooks

import (
	"testing"

	"github.com/askbridge/askbridge/core"
)

// TestCheckReplyTakesEveryAnswerTheDoorGives: what the door answers a
// prompt it could not ask (FailedAsk) is taken by the hook command as
// the door's answer, as every decision is (TestOutputs); what no door
// writes is not.
func TestCheckReplyTakesEveryAnswerTheDoorGives(t *testing.T) {
	for _, h := range Hosts {
		for _, e := range []Event{PermissionRequest, PreToolUse} {
			p := Prompt{Host: h, Event: e}
			for _, err := range []error{
				core.Errorf(core.CodeInvalid, "hook", "tool_input must be a JSON object"),
				core.Errorf(core.CodeInternal, "hook", "the store is down"),
			} {
				out, ok := FailedAsk(p, err)
				if !ok { // exit 1, nothing on stdout
					if e == PreToolUse && h == ClaudeCode {
						t.Fatalf("%s %s: no answer for a prompt not asked", h, e)
					}
					continue
				}
				if err := CheckReply(p, out); err != nil {
					t.Errorf("%s %s: %s refused: %v", h, e, out, err)
				}
			}
		}
	}
	p := Prompt{Host: Codex, Event: PermissionRequest}
	for _, bad := range []string{`not json`, `[]`, `{}`, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}`} {
		if CheckReply(p, []byte(bad)) == nil {
			t.Errorf("%s taken as the door's answer to a Codex PermissionRequest", bad)
		}
	}
	if CheckReply(p, nil) != nil {
		t.Error("an empty answer to a Codex PermissionRequest (no decision) refused")
	}
}

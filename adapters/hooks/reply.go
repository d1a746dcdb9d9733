package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
)

// MaxOutputBytes bounds a hook's answer as the "askbridge hook" command
// reads it from the door: far above the largest the door writes (a
// deny's fenced reasons, an allow's edited input of at most
// core.MaxArgumentsLen), so that a body without end is refused rather
// than read whole and handed to the host.
const MaxOutputBytes = 1 << 20

// CheckReply reports whether out, read from the hook door for p, is an
// answer the door gives for p: nothing, where the host reads nothing as
// no decision (Output), or a JSON object whose hookSpecificOutput names
// p's event. What else answers with 200 (a captive proxy's page, another
// service at the address) is no decision; printed to the host, it would
// leave a Claude Code PreToolUse call to the host's own permission
// rules, which may run it unasked, where an askbridge that cannot be
// reached gets "ask" (FailedAsk).
func CheckReply(p Prompt, out []byte) error {
	if len(out) > MaxOutputBytes {
		return fmt.Errorf("its response is larger than %d bytes", MaxOutputBytes)
	}
	if len(out) == 0 {
		if p.Host == ClaudeCode && p.Event == PreToolUse {
			return errors.New("its response is not a hook decision: it is empty")
		}
		return nil
	}
	var reply struct {
		Specific *struct {
			Event string `json:"hookEventName"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out, &reply); err != nil {
		return errors.New("its response is not a hook decision: it is not JSON")
	}
	if reply.Specific == nil || p.Event != "" && reply.Specific.Event != string(p.Event) {
		return fmt.Errorf("its response is not a hook decision for %s", eventName(p.Event))
	}
	return nil
}

// eventName names a prompt's event in a message.
func eventName(e Event) string {
	if e == "" {
		return "this prompt"
	}
	return string(e)
}

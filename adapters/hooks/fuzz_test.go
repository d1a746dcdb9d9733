package hooks

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// FuzzParse: whatever a host (or anyone with an agent token) sends, Parse
// either refuses it as invalid, naming what is wrong, or reads a prompt
// whose ask core accepts (within the size cap on arguments).
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"hook_event_name":"PermissionRequest","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"}}`,
		`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Edit","tool_input":{},"tool_use_id":"t","cwd":"/a/b"}`,
		`{"hook_event_name":"PermissionRequest","session_id":"s","tool_name":"Bash","tool_input":{"a":1e999}}`,
		`{}`, `null`, `[`, `{"tool_input":{"command":"x"}}`,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, body string, codex bool) {
		h := ClaudeCode
		if codex {
			h = Codex
		}
		p, err := Parse(h, []byte(body))
		if err != nil {
			if core.ErrorCode(err) != core.CodeInvalid {
				t.Fatalf("refused with %v, want an invalid error", err)
			}
			return
		}
		in, err := p.Ask("agent", "")
		if err != nil {
			if core.ErrorCode(err) != core.CodeInvalid {
				t.Fatalf("ask refused with %v", err)
			}
			return
		}
		// Only the size cap on arguments is core's to refuse; anything
		// else Parse let through would be a prompt the door cannot ask.
		if err := in.Validate(); err != nil && !strings.Contains(err.Error(), "arguments are") {
			t.Fatalf("core refuses a prompt Parse accepted: %v\n%s", err, body)
		}
	})
}

package hooks

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAskContextCannotForgeALine: the card's context is one line per
// thing it says, each saying whose it is. The tool input's description
// is the model's own words (Claude Code's Bash description, Codex's
// justification), and a line break in it, or in a working directory the
// model named, made more lines on the card: "Working directory: /tmp/x"
// or "Checked by askbridge policy: read-only" under a command that is
// neither. Before, the description was shown as sent, unmarked, its line
// breaks kept.
func TestAskContextCannotForgeALine(t *testing.T) {
	for _, lie := range []string{"\n", "\r\n", "\u2028", "\u2029", "\u0085", "\v", "\f", "\r"} {
		body := `{"hook_event_name":"PermissionRequest","session_id":"s1","tool_name":"Bash",` +
			`"cwd":"/repo` + jsonEscape(lie) + `Description: safe",` +
			`"tool_input":{"command":"rm -rf ~","description":"List the files` + jsonEscape(lie) + `Working directory: /tmp/scratch` +
			jsonEscape(lie) + `Checked by askbridge policy: read-only"}}`
		p, err := Parse(ClaudeCode, []byte(body))
		if err != nil {
			t.Fatalf("%q: %v", lie, err)
		}
		in, err := p.Ask("claude", "")
		if err != nil {
			t.Fatalf("%q: %v", lie, err)
		}
		if err := in.Validate(); err != nil {
			t.Fatalf("%q: %v", lie, err)
		}
		lines := strings.Split(in.Context, "\n")
		want := []string{"Working directory: ", "The agent's description of the call: "}
		if len(lines) != len(want) {
			t.Fatalf("%q: the context has %d lines, want %d: %q", lie, len(lines), len(want), in.Context)
		}
		for i, l := range lines {
			if !strings.HasPrefix(l, want[i]) || strings.ContainsAny(l, "\r\v\f\u0085\u2028\u2029") {
				t.Errorf("%q: line %d is %q; want one line opening with %q", lie, i, l, want[i])
			}
		}
		if !strings.Contains(lines[1], "List the files Working directory: /tmp/scratch Checked by askbridge policy: read-only") {
			t.Errorf("%q: the description is not kept, on one line: %q", lie, lines[1])
		}
	}
}

// jsonEscape writes s as the inside of a JSON string.
func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

package hooks_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestHookCodexMCPCallsAreAsked: Codex runs its hooks for MCP tools too
// (tool_name mcp__server__tool, tool_input the call's arguments). One
// whose arguments parse is asked like any call; one whose arguments do
// not parse, which Codex sends as a JSON string (testdata/SOURCES), is
// not a call askbridge can show or bind, and its PreToolUse is denied
// saying why: no decision would leave it to Codex's own approval policy.
func TestHookCodexMCPCallsAreAsked(t *testing.T) {
	d := newDoor(t)
	status, id, body := d.send(t.Context(), "/v1/hooks/codex?wait=1ms", hookFixture(t, "codex/pre-tool-use.mcp.json"))
	if status != http.StatusOK || id == "" || body != "" {
		t.Fatalf("an MCP call: %d, question %q, body %s; want it asked, then left to Codex when the wait ran out", status, id, body)
	}
	q, err := d.svc.Get(t.Context(), id)
	if err != nil || q.Call == nil || q.Call.Tool != "mcp__memory__create_entities" || !strings.Contains(string(q.Call.Arguments), `"entityType":"person"`) {
		t.Fatalf("asked as %+v, %v", q, err)
	}
	status, id, body = d.send(t.Context(), "/v1/hooks/codex", hookFixture(t, "codex/pre-tool-use.mcp-unparsed.json"))
	if status != http.StatusOK || id != "" || !strings.Contains(body, `"permissionDecision":"deny"`) || !strings.Contains(body, "tool_input must be a JSON object") {
		t.Fatalf("an MCP call whose arguments do not parse: %d, question %q, body %s; want a deny saying why, nothing parked", status, id, body)
	}
}

package mcp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/mcp"
)

// TestBodyOverTheCapIsRefused: a POST to /mcp over a MiB is refused
// (413) and parks nothing, on both the 2026-07-28 path and a session's.
// The door reads up to a MiB of a body to tell calls, cancellations and
// task listens apart; before, the SDK took bodies up to four, so a call
// padded past the first MiB went through unread by the door: not tied
// to its POST, nor found by a cancellation.
func TestBodyOverTheCapIsRefused(t *testing.T) {
	e := newTaskEnv(t)
	c := e.host("tok-alice", tasksCaps(false))
	args := map[string]any{"question": "Padded?", "reversibility": "reversible", "context": strings.Repeat("x", 2<<20)}
	res, _, err := c.post(e.ctx, "tools/call", mcp.ToolClarification, map[string]any{"name": mcp.ToolClarification, "arguments": args})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a call of 2 MiB: HTTP %d, want 413", res.StatusCode)
	}
	if qs, _, _ := e.svc.ListOpen(e.ctx, "", 10); len(qs) != 0 {
		t.Errorf("a call over the cap parked %d questions", len(qs))
	}
}

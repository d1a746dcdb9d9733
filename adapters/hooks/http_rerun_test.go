package hooks_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestHookRerunSaysWhoWithdrew: a Codex PreToolUse hook run again for a
// call whose question askbridge itself withdrew (its wait ran out, or its
// host stopped waiting) is still denied, but is told askbridge withdrew
// it, not the agent (law 12). Before, the re-run read "The agent withdrew
// the askbridge question about this call", which the agent never did.
func TestHookRerunSaysWhoWithdrew(t *testing.T) {
	d := newDoor(t)
	for _, c := range []struct {
		name     string
		withdraw func(t *testing.T, body string)
		want     string
	}{
		{"its wait ran out", func(t *testing.T, body string) {
			if got := d.start(t.Context(), "/v1/hooks/codex?wait=1ms", body).body(t); got != "" {
				t.Fatalf("body %s when the wait ran out; want none (Codex's own policy decides)", got)
			}
		}, "askbridge withdrew the question about this call when its wait for an answer ran out"},
		{"its host stopped waiting", func(t *testing.T, body string) {
			ctx, cancel := context.WithCancel(t.Context())
			d.withdrawn(d.start(ctx, "/v1/hooks/codex", body), cancel)
		}, "askbridge withdrew the question about this call when the host stopped waiting for it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := hookInput(t, "codex/pre-tool-use.bash.json", map[string]string{"session_id": strconv.Quote("rerun-" + c.name)})
			c.withdraw(t, body)
			status, _, got := d.send(t.Context(), "/v1/hooks/codex", body)
			if status != http.StatusOK || !strings.Contains(got, `"permissionDecision":"deny","permissionDecisionReason":"`+c.want) || strings.Contains(got, "agent") {
				t.Fatalf("re-run: %d %s; want a deny saying %q, naming no agent", status, got, c.want)
			}
		})
	}
}

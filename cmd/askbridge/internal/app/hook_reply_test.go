package app_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/hooks"
)

// TestHookCommandTakesOnlyADecision: what a server answers with 200 is
// printed to the host only when it is a decision the hook door gives for
// that prompt, and no larger than the door ever writes. Anything else (a
// captive proxy's page, another service on ASKBRIDGE_URL that answers
// every POST, an empty body where the door always says something, a body
// without end) is a server that did not answer: Claude Code's PreToolUse
// gets "ask", saying so, as when askbridge is down. Before, the command
// printed it as it came and exited 0: Claude Code took the page for no
// decision and left the call to its own permission rules, which may run
// it unasked; and a body without end was read whole into memory.
func TestHookCommandTakesOnlyADecision(t *testing.T) {
	for _, c := range []struct {
		name string
		body func(w http.ResponseWriter)
		why  string
	}{
		{"a page", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html><body>Sign in to continue</body></html>"))
		}, "not a hook decision"},
		{"nothing", func(w http.ResponseWriter) {}, "not a hook decision"},
		{"another event's decision", func(w http.ResponseWriter) {
			_, _ = w.Write([]byte(`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`))
		}, "not a hook decision"},
		{"no end", func(w http.ResponseWriter) {
			_, _ = w.Write([]byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"`))
			chunk := []byte(strings.Repeat("x", 64<<10))
			for range 2 * hooks.MaxOutputBytes / len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
			_, _ = w.Write([]byte(`"}}`))
		}, "larger than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusOK)
				c.body(w)
			}))
			t.Cleanup(srv.Close)
			code, out, errb := hookAt(t, srv.URL)
			want := `"permissionDecision":"ask","permissionDecisionReason":"askbridge could not ask in chat (askbridge at ` + srv.URL + ` did not answer: `
			if code != 0 || !strings.HasPrefix(out.String(), `{"hookSpecificOutput"`) || !strings.Contains(out.String(), want) ||
				!strings.Contains(out.String(), c.why) || out.Len() > 4096 {
				t.Fatalf("exit %d, stdout %.300q (%d bytes), stderr %.300q; want exit 0 and %q, saying %q", code, out.String(), out.Len(), errb.String(), want, c.why)
			}
		})
	}
}

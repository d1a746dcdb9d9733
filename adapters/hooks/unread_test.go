package hooks_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/hooks"
	"github.com/askbridge/askbridge/core"
)

// TestUnreadCodexPreToolUseHeldIsDenied: a hook request refused because
// its address presented too many wrong tokens (429) is a refusal the
// agent can bring about at will: the model's shell, on the host's
// machine, need only present wrong tokens from the same address first.
// Codex's PreToolUse reads no decision as leaving the call to its own
// approval policy, which may run it unasked, so such a refusal would get
// the call past every deny rule, as a failed ask would (FailedAsk): it
// is denied, saying why. A wrong token of the hook's own (401), which
// the agent cannot bring about, still leaves the call to Codex; Claude
// Code's PreToolUse gets "ask" either way, and a PermissionRequest the
// refusal. Before, the 429 went out as it was, and Codex ran the call
// under its own policy.
func TestUnreadCodexPreToolUseHeldIsDenied(t *testing.T) {
	held := core.Errorf(core.CodeForbidden, "auth", "too many wrong tokens from this address: try again in 2 seconds")
	wrong := core.Errorf(core.CodeForbidden, "auth", "a valid bearer token is required")
	for _, c := range []struct {
		name, path, fixture string
		status              int
		err                 error
		wantStatus          int
		want                string
	}{
		{"Codex PreToolUse, held", "/v1/hooks/codex", "codex/pre-tool-use.bash.json", http.StatusTooManyRequests, held, http.StatusOK,
			`"permissionDecision":"deny","permissionDecisionReason":"askbridge refused to ask about this call (too many wrong tokens from this address`},
		{"Codex PreToolUse, a wrong token", "/v1/hooks/codex", "codex/pre-tool-use.bash.json", http.StatusUnauthorized, wrong, http.StatusUnauthorized, "a valid bearer token is required"},
		{"Codex PermissionRequest, held", "/v1/hooks/codex", "codex/permission-request.bash.json", http.StatusTooManyRequests, held, http.StatusTooManyRequests, "too many wrong tokens"},
		{"Claude Code PreToolUse, held", "/v1/hooks/claude-code", "claude-code/pre-tool-use.bash.json", http.StatusTooManyRequests, held, http.StatusOK, `"permissionDecision":"ask"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodPost, c.path, strings.NewReader(hookFixture(t, c.fixture)))
			hooks.Unread(w, r, c.status, c.err)
			b, _ := io.ReadAll(w.Result().Body)
			if w.Code != c.wantStatus || !strings.Contains(string(b), c.want) {
				t.Fatalf("%d %s; want %d with %s", w.Code, b, c.wantStatus, c.want)
			}
		})
	}
}

// TestHeldKeepsItsCause: the held refusal keeps its cause's code and
// message for whoever reads it as an error (the program's log, a
// PermissionRequest's 429), and FailedAsk still tells it from the
// cause alone, which is no reason to deny.
func TestHeldKeepsItsCause(t *testing.T) {
	cause := core.Errorf(core.CodeForbidden, "auth", "too many wrong tokens from this address")
	err := hooks.Held(cause)
	if core.ErrorCode(err) != core.CodeForbidden || core.ErrorMessage(err) != "too many wrong tokens from this address" || !errors.Is(err, cause) {
		t.Fatalf("code %s, message %q, wraps its cause: %v", core.ErrorCode(err), core.ErrorMessage(err), errors.Is(err, cause))
	}
	p := hooks.Prompt{Host: hooks.Codex, Event: hooks.PreToolUse}
	if _, ok := hooks.FailedAsk(p, cause); ok {
		t.Fatal("a forbidden refusal alone denies on Codex")
	}
	if out, ok := hooks.FailedAsk(p, &hooks.Unreached{Server: "http://127.0.0.1:8080", Refused: true, Err: err}); !ok || !strings.Contains(string(out), `"permissionDecision":"deny"`) {
		t.Fatalf("a held refusal the hook command read: %s, %v; want a deny", out, ok)
	}
}

package app_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

// TestHookCommandCodexPreToolUseHeldIsDenied: the model's shell, on the
// machine Codex runs on, can get its address held by presenting wrong
// tokens, after which askbridge refuses the hook's own token (429) until
// it has seen it succeed from there. Codex's PreToolUse reads a failed
// hook as leaving the call to its own approval policy, which may run it
// unasked: the call would get past every deny rule, as one whose ask the
// agent made fail would. So the prompt is denied, saying why, whether
// askbridge or a proxy before it answered the 429. Before, the hook
// exited 1 with nothing on stdout, and Codex ran the call under its own
// policy.
func TestHookCommandCodexPreToolUseHeldIsDenied(t *testing.T) {
	t.Run("askbridge", func(t *testing.T) {
		m := apptest.Start(t, app.Settings{})
		held := false
		for i := 0; i < 200 && !held; i++ {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, m.URL+"/v1/questions", nil)
			req.Header.Set("Authorization", fmt.Sprintf("Bearer wrong-token-%d", i))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			held = resp.StatusCode == http.StatusTooManyRequests
		}
		if !held {
			t.Fatal("200 wrong tokens and the address is not held")
		}
		// --wait bounds the test should the hook's token get through.
		code, out, errb := codexPreToolUseAt(t, m.URL, "--wait", "1s")
		want := `"permissionDecision":"deny","permissionDecisionReason":"askbridge refused to ask about this call (too many wrong tokens from this address`
		if code != 0 || !strings.Contains(out.String(), want) {
			t.Fatalf("exit %d, stdout %q, stderr %q; want exit 0 and %s", code, out.String(), errb.String(), want)
		}
	})
	t.Run("a proxy", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
		}))
		t.Cleanup(srv.Close)
		code, out, errb := codexPreToolUseAt(t, srv.URL)
		want := `"permissionDecision":"deny","permissionDecisionReason":"askbridge refused to ask about this call (askbridge at ` + srv.URL + ` refused the ask: `
		if code != 0 || !strings.Contains(out.String(), want) {
			t.Fatalf("exit %d, stdout %q, stderr %q; want exit 0 and %s", code, out.String(), errb.String(), want)
		}
	})
	t.Run("a proxy, another error", func(t *testing.T) {
		// Not a refusal the agent brings about: Codex decides, as
		// when askbridge is down.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "Bad Gateway", http.StatusBadGateway)
		}))
		t.Cleanup(srv.Close)
		code, out, errb := codexPreToolUseAt(t, srv.URL)
		if code != 1 || out.Len() != 0 || !strings.Contains(errb.String(), "refused the ask") {
			t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1, nothing on stdout and the refusal on stderr", code, out.String(), errb.String())
		}
	})
}

// codexPreToolUseAt runs the hook command for Codex's Bash PreToolUse
// fixture against the server at url, with args after --host codex, and
// returns its exit code, stdout and stderr.
func codexPreToolUseAt(t *testing.T, url string, args ...string) (int, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	return runHook(t, url, "codex", "codex/pre-tool-use.bash.json", args...)
}

package app_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/askbridge/askbridge/adapters/hooks"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

// TestHookCommandServerGoneMidWaitSaysWhy: a server that goes away while
// the hook waits for the decision (a restart, a proxy timing out) leaves
// a Claude Code prompt to the person at the keyboard with why, as a
// server down before it answered does: "askbridge at URL did not answer:
// ...". Before, they read "internal error".
func TestHookCommandServerGoneMidWaitSaysWhy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(hooks.HeaderQuestionID, "q-gone")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection drops, the decision never sent
	}))
	t.Cleanup(srv.Close)
	code, out, errb := hookAt(t, srv.URL)
	want := `"permissionDecision":"ask","permissionDecisionReason":"askbridge could not ask in chat (askbridge at ` + srv.URL + ` did not answer: `
	if code != 0 || !strings.Contains(out.String(), want) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 0 and %q", code, out.String(), errb.String(), want)
	}
}

// TestHookCommandServerRefusalSaysRefused: a server that answers the ask
// with an error (askbridge's own 429 after wrong tokens, a proxy's 502)
// did answer; the reason the person at the keyboard reads says it
// refused, with what it said, not that it "did not answer".
func TestHookCommandServerRefusalSaysRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":{"code":"rate_limited","message":"too many wrong tokens from this address"}}`))
	}))
	defer srv.Close()
	code, out, errb := hookAt(t, srv.URL)
	want := `askbridge at ` + srv.URL + ` refused the ask: too many wrong tokens from this address (429)`
	if code != 0 || !strings.Contains(out.String(), want) || strings.Contains(out.String(), "did not answer") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 0 and %q", code, out.String(), errb.String(), want)
	}
}

// hookAt runs the hook command for Claude Code's Bash PreToolUse fixture
// against the server at url, and returns its exit code, stdout and
// stderr.
func hookAt(t *testing.T, url string) (int, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	return runHook(t, url, "claude-code", "claude-code/pre-tool-use.bash.json")
}

// runHook runs the hook command for host with the hook fixture named
// (under apptest.HookTestdata) as its input, against the server at url
// as agent A, with args after --host, and returns its exit code, stdout
// and stderr.
func runHook(t *testing.T, url, host, fixture string, args ...string) (int, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	in, err := os.ReadFile(filepath.Join(apptest.HookTestdata, fixture))
	if err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		return map[string]string{"ASKBRIDGE_URL": url, "ASKBRIDGE_TOKEN": apptest.AgentA}[k]
	}
	var out, errb bytes.Buffer
	code := app.Run(t.Context(), append([]string{"hook", "--host", host}, args...), env, bytes.NewReader(in), &out, &errb)
	return code, &out, &errb
}

// TestHookCommandRefusesAnInputTheDoorWouldRefuse: a hook input over the
// door's limit (hooks.MaxInputBytes) is refused by the command itself,
// with the prompt left to the person at the keyboard and the reason, and
// never sent. Before, the command read and sent up to 4 MiB, which the
// door then refused past 1 MiB, after the upload.
func TestHookCommandRefusesAnInputTheDoorWouldRefuse(t *testing.T) {
	var reached atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Store(true)
		http.Error(w, "unexpected", http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	env := func(k string) string {
		return map[string]string{"ASKBRIDGE_URL": srv.URL, "ASKBRIDGE_TOKEN": apptest.AgentA}[k]
	}
	in := `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + strings.Repeat("x", hooks.MaxInputBytes) + `"}}`
	var out, errb bytes.Buffer
	code := app.Run(t.Context(), []string{"hook", "--host", "claude-code"}, env, strings.NewReader(in), &out, &errb)
	want := fmt.Sprintf("larger than %d bytes", hooks.MaxInputBytes)
	if code != 0 || !strings.Contains(out.String(), `"permissionDecision":"ask"`) || !strings.Contains(out.String(), want) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 0, an ask and %q", code, out.String(), errb.String(), want)
	}
	if reached.Load() {
		t.Fatal("the oversized input was sent to the server")
	}
}

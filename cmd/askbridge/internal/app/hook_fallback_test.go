package app_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/hooks"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

// hookInput is a hook fixture's bytes.
func hookInput(t *testing.T, fixture string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(apptest.HookTestdata, fixture))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// hookEnv reaches the server at url with an agent's token.
func hookEnv(url string) func(string) string { return envAt(url, apptest.AgentA) }

// TestHookCommandWrittenWrongStillFallsBack: a hook command with a bad
// flag or a stray argument still reads the prompt and gives its host the
// fallback of a prompt that cannot be asked (Claude Code's PreToolUse:
// "ask", exit 0), with the usage error on stderr; where the host cannot
// be told (Codex's PreToolUse when askbridge is not asked, or no
// readable --host) it exits 1. Before, it exited 1 before reading stdin,
// and Claude Code left the call to its own rules, which may run it
// unasked.
func TestHookCommandWrittenWrongStillFallsBack(t *testing.T) {
	env := hookEnv("http://127.0.0.1:1")
	claude, codex := hookInput(t, "claude-code/pre-tool-use.bash.json"), hookInput(t, "codex/pre-tool-use.bash.json")
	for _, c := range []struct {
		in      string
		args    []string
		code    int
		ask     bool
		errWant string
	}{
		{claude, []string{"--host", "claude-code", "--wait", "290"}, 0, true, "invalid value"},
		{claude, []string{"--wait", "290", "--host", "claude-code"}, 0, true, "invalid value"},
		{claude, []string{"--host=claude-code", "--wiat", "4m"}, 0, true, "not defined"},
		{claude, []string{"--host", "claude-code", "--wait", "4m", "extra"}, 0, true, `unexpected argument "extra"`},
		{codex, []string{"--host", "codex", "--wait", "290"}, app.ExitError, false, "invalid value"},
		{claude, []string{"--wait", "290"}, app.ExitError, false, "invalid value"},
	} {
		code, out, errb := runAll(t.Context(), env, c.in, append([]string{"hook"}, c.args...)...)
		if code != c.code || strings.Contains(out, `"permissionDecision":"ask"`) != c.ask || (!c.ask && out != "") || !strings.Contains(errb, c.errWant) {
			t.Errorf("hook %v: exit %d, stdout %q, stderr %q; want exit %d, ask %v, %q on stderr", c.args, code, out, errb, c.code, c.ask, c.errWant)
		}
	}
}

// TestHookCommandUsageErrorSaysSo: the reason Claude Code shows for a
// hook command written wrong names it a usage error of askbridge's hook
// command, says what was wrong and how the command is written, so the
// person at the keyboard knows to fix the hook's settings. Before, it
// read "askbridge could not ask in chat (internal error)".
func TestHookCommandUsageErrorSaysSo(t *testing.T) {
	env := hookEnv("http://127.0.0.1:1")
	claude := hookInput(t, "claude-code/pre-tool-use.bash.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--host=claude-code", "--wiat", "4m"}, "flag provided but not defined: -wiat"},
		{[]string{"--host", "claude-code", "--wait", "290"}, `invalid value "290" for flag -wait`},
		{[]string{"--host", "claude-code", "extra"}, `unexpected argument "extra"`},
	} {
		code, out, errb := runAll(t.Context(), env, claude, append([]string{"hook"}, c.args...)...)
		var got struct {
			Specific struct {
				Decision string `json:"permissionDecision"`
				Reason   string `json:"permissionDecisionReason"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
			t.Errorf("hook %v: exit %d, stdout %q (%v), stderr %q", c.args, code, out, err, errb)
			continue
		}
		r := got.Specific.Reason
		for _, want := range []string{"usage error in the askbridge hook command", c.want, "askbridge hook --host claude-code|codex"} {
			if got.Specific.Decision != "ask" || !strings.Contains(r, want) {
				t.Errorf("hook %v: %s %q; want ask and %q in the reason", c.args, got.Specific.Decision, r, want)
			}
		}
		if strings.Contains(r, "internal error") {
			t.Errorf("hook %v: the reason %q says internal error", c.args, r)
		}
	}
}

// TestHookCommandGivesUpOnAHungServer: a server that takes the request
// and sends nothing, or sends the question's id and then never the
// decision, does not keep the hook until the host kills it (when it
// prints nothing): the hook gives up on its own, tells Claude Code's
// PreToolUse "ask" as for a bridge that cannot be reached, and
// withdraws the question whose id it has. Before, it waited for ever.
func TestHookCommandGivesUpOnAHungServer(t *testing.T) {
	in := hookInput(t, "claude-code/pre-tool-use.bash.json")
	askWant := `"permissionDecision":"ask"`

	t.Run("no headers", func(t *testing.T) {
		app.SetHookTimeouts(t, 50*time.Millisecond, time.Hour, time.Hour)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var conns []net.Conn
		t.Cleanup(func() {
			ln.Close()
			mu.Lock()
			defer mu.Unlock()
			for _, c := range conns {
				c.Close()
			}
		})
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
		}()
		url := "http://" + ln.Addr().String()
		code, out, errb := runAll(t.Context(), hookEnv(url), in, "hook", "--host", "claude-code")
		if code != 0 || !strings.Contains(out, askWant) || !strings.Contains(out, "askbridge at "+url+" did not answer") {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 0 and ask, the server named", code, out, errb)
		}
	})

	t.Run("no decision", func(t *testing.T) {
		app.SetHookTimeouts(t, time.Hour, 50*time.Millisecond, 50*time.Millisecond)
		cancelled := make(chan string, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/cancel") {
				body, _ := io.ReadAll(r.Body)
				cancelled <- r.URL.Path + " " + string(body)
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{}`))
				return
			}
			w.Header().Set(hooks.HeaderQuestionID, "q-hung")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done() // the decision never comes
		}))
		t.Cleanup(srv.Close)
		code, out, errb := runAll(t.Context(), hookEnv(srv.URL), in, "hook", "--host", "claude-code")
		if code != 0 || !strings.Contains(out, askWant) || !strings.Contains(out, "no decision within") {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 0 and ask, saying no decision came", code, out, errb)
		}
		select {
		case p := <-cancelled:
			// The cards say the hook gave up on askbridge, not that the
			// host stopped waiting: the host is still waiting on it.
			if !strings.HasPrefix(p, "/v1/questions/q-hung/cancel ") || !strings.Contains(p, "no decision from askbridge") {
				t.Errorf("withdrew %s; want q-hung, saying the hook had no decision from askbridge", p)
			}
		default:
			t.Error("the question was not withdrawn")
		}
	})
}

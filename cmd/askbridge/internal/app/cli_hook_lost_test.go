package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/askbridge/askbridge/adapters/hooks"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// holdingProxy is a proxy before the program at up that holds each
// hook's answer back, as a server too slow to write it would: it passes
// the status and the question id on at once, sends the id to asked, and
// never sends the body; the request goes on upstream whatever the
// command does. A withdrawal waits for release, so that it comes after
// whatever the test does to the question first.
func holdingProxy(t *testing.T, up string, release <-chan struct{}) (string, <-chan core.QuestionID) {
	t.Helper()
	target, err := url.Parse(up)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	asked := make(chan core.QuestionID, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/v1/hooks/"):
			body, _ := io.ReadAll(r.Body)
			req, err := http.NewRequestWithContext(context.WithoutCancel(r.Context()), r.Method, up+r.URL.RequestURI(), bytes.NewReader(body))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			req.Header = r.Header.Clone()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			go func() { _, _ = io.Copy(io.Discard, resp.Body); resp.Body.Close() }()
			maps.Copy(w.Header(), resp.Header)
			w.WriteHeader(resp.StatusCode)
			w.(http.Flusher).Flush()
			asked <- core.QuestionID(resp.Header.Get(hooks.HeaderQuestionID))
			<-r.Context().Done()
		case strings.HasSuffix(r.URL.Path, "/cancel"):
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			rp.ServeHTTP(w, r)
		default:
			rp.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, asked
}

// validHookOutput fails t unless out passes the host's pinned schema.
func validHookOutput(t *testing.T, schema string, out []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("stdout %q is not JSON: %v", out, err)
	}
	if err := hookSchema(t, schema).Validate(v); err != nil {
		t.Fatalf("stdout fails the host's schema: %v\n%s", err, out)
	}
}

// TestHookCommandHandsOverADenyItsBoundOutran: a person denies the call,
// but the door's answer does not reach the hook command within its bound
// (the server slow to write it): the command finds its question already
// closed when it goes to withdraw it, reads how, and hands the host the
// deny, saying who denied it. Before, it printed what a server out of
// reach gets: nothing for Codex's PreToolUse, which left the call a person
// refused to Codex's own approval policy; "ask" for Claude Code's; exit
// 1 for a PermissionRequest. Every answer passes its host's schema.
func TestHookCommandHandsOverADenyItsBoundOutran(t *testing.T) {
	app.SetHookTimeouts(t, time.Hour, 500*time.Millisecond, 500*time.Millisecond)
	s := app.Settings{}
	s.File.Routes = map[string]app.RouteFile{core.DefaultRoute: {Deciders: map[string][]string{"api": {"*"}}}}
	m := apptest.Start(t, s)
	ops := client.New(m.URL, apptest.OpTok)
	const person = "A person denied this tool call in askbridge."
	for _, c := range []struct {
		host, fixture, schema, want string
	}{
		{"codex", "codex/pre-tool-use.bash.json", "codex/pre-tool-use.command.output.schema.json", `"permissionDecision":"deny","permissionDecisionReason":"` + person},
		{"claude-code", "claude-code/pre-tool-use.bash.json", "claude-code/pre-tool-use.output.schema.json", `"permissionDecision":"deny","permissionDecisionReason":"` + person},
		{"codex", "codex/permission-request.bash.json", "codex/permission-request.command.output.schema.json", `"behavior":"deny","message":"` + person},
		{"claude-code", "claude-code/permission-request.bash.json", "claude-code/permission-request.output.schema.json", `"behavior":"deny","message":"` + person},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			release, stop := make(chan struct{}), make(chan struct{})
			proxy, asked := holdingProxy(t, m.URL, release)
			denied := make(chan error, 1)
			go func() {
				defer close(release)
				var id core.QuestionID
				select {
				case id = <-asked:
				case <-stop:
					denied <- errors.New("the hook never asked")
					return
				}
				_, err := ops.Answer(context.Background(), id, client.AnswerRequest{ChosenOptionID: core.DenyOption, Answer: "Not on the release branch."})
				denied <- err
			}()
			code, out, errb := runHook(t, proxy, c.host, c.fixture, "--wait", "1m")
			close(stop)
			if err := <-denied; err != nil {
				t.Fatalf("denying: %v (hook: exit %d, stdout %q, stderr %q)", err, code, out.String(), errb.String())
			}
			if code != 0 || !strings.Contains(out.String(), c.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 0 and %s", code, out.String(), errb.String(), c.want)
			}
			validHookOutput(t, c.schema, out.Bytes())
		})
	}
}

// lostServer answers the hook with its question's id and never the
// decision; the command's withdrawal of it is refused with cancel's
// status and body, and the question reads as view.
func lostServer(t *testing.T, cancel int, cancelBody string, view *client.AgentQuestion) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/cancel"):
			w.WriteHeader(cancel)
			_, _ = io.WriteString(w, cancelBody)
		case r.Method == http.MethodGet:
			_ = json.NewEncoder(w).Encode(view)
		default:
			w.Header().Set(hooks.HeaderQuestionID, string(view.ID))
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestHookCommandLostAnswerSaysWhatItKnows: where the door's answer did
// not reach the hook command in time and what closed its question is no
// deny, the host gets what a server out of reach gets (hooks.FailedAsk:
// "ask" for Claude Code's PreToolUse; for Codex's, exit 1 and nothing
// on stdout, which decides nothing), and the
// reason says what the command knows: the approval that did not arrive,
// or that what became of the question could not be read. Before, both
// read "no decision within", which for an approval was untrue.
func TestHookCommandLostAnswerSaysWhatItKnows(t *testing.T) {
	app.SetHookTimeouts(t, time.Hour, 50*time.Millisecond, 50*time.Millisecond)
	yes := true
	approved := client.AgentView(&core.Question{ID: "q-late", Agent: "agent-a", State: core.StateAnswered,
		Resolution: &core.Resolution{State: core.StateAnswered, ClosedBy: core.CloserPerson, Approved: &yes}})
	conflict := `{"error":{"code":"conflict","message":"question q-late is answered already"}}`
	for _, c := range []struct {
		name       string
		cancel     int
		cancelBody string
		want       string
	}{
		{"approved", http.StatusConflict, conflict, "the approval of question q-late did not arrive within 100ms"},
		{"unknown", http.StatusInternalServerError, `{"error":{"code":"internal","message":"internal error"}}`, "what became of question q-late could not be read"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := lostServer(t, c.cancel, c.cancelBody, approved)
			code, out, errb := runHook(t, srv, "claude-code", "claude-code/pre-tool-use.bash.json")
			if code != 0 || !strings.Contains(out.String(), `"permissionDecision":"ask"`) || !strings.Contains(out.String(), c.want) {
				t.Fatalf("Claude Code: exit %d, stdout %q, stderr %q; want exit 0, ask, and %q", code, out.String(), errb.String(), c.want)
			}
			validHookOutput(t, "claude-code/pre-tool-use.output.schema.json", out.Bytes())
			code, out, errb = runHook(t, srv, "codex", "codex/pre-tool-use.bash.json")
			if code != app.ExitError || out.Len() != 0 || !strings.Contains(errb.String(), c.want) {
				t.Fatalf("Codex: exit %d, stdout %q, stderr %q; want exit %d, nothing (Codex's own policy), and %q on stderr", code, out.String(), errb.String(), app.ExitError, c.want)
			}
		})
	}
}

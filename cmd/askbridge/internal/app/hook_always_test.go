package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// claudePrompt runs `askbridge hook` on route claude-code with Claude
// Code's PermissionRequest fixture, its tool and input replaced.
func claudePrompt(t *testing.T, m *app.Main, tool string, input map[string]any) *hookProcess {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(apptest.HookTestdata, "claude-code/permission-request.bash.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	fields["tool_name"], _ = json.Marshal(tool)
	fields["tool_input"], _ = json.Marshal(input)
	in, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	return startHookInput(t, m, "claude-code", in, "--route", "claude-code")
}

// decided is the hook's stdout once it exits 0, checked against Claude
// Code's PermissionRequest output schema.
func (h *hookProcess) decided(t *testing.T) string {
	t.Helper()
	if code := h.exit(t); code != 0 {
		t.Fatalf("exit %d: %s", code, h.stderr.String())
	}
	out := h.stdout.Bytes()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("stdout %q: %v", out, err)
	}
	if err := hookSchema(t, "claude-code/permission-request.output.schema.json").Validate(v); err != nil {
		t.Fatalf("stdout %s fails the host's schema: %v", out, err)
	}
	return string(out)
}

// TestHookAlwaysAllow is the promise on both stores, through the
// real `askbridge hook`: after "don't ask again for this tool in this
// run", that session's later calls of the tool are allowed with nobody
// asked, while a rm -rf is still asked, of two people. The host is handed
// a session rule of its own only for a tool whose every call the rules
// leave to a standing approval (WebFetch here), never for Bash, where a
// rule asks some calls as hard to reverse, nor for a tool that edits
// files.
func TestHookAlwaysAllow(t *testing.T) {
	apptest.ForEachBackend(t, func(t *testing.T, b apptest.Backend) {
		s := b.Settings(t)
		anyone := map[string][]string{"api": {"*"}}
		s.File.Routes = map[string]app.RouteFile{
			core.DefaultRoute: {Deciders: anyone},
			"infra-leads":     {Deciders: anyone, Quorum: 2},
			"claude-code": {Deciders: anyone, Rules: []app.RuleFile{
				{Name: "destructive", When: `tool == "Bash" && args.command.matches("rm -rf|git push --force")`, Reversibility: "hard_to_reverse", Route: "infra-leads"},
				{Name: "shell", When: `tool == "Bash"`, Reversibility: "reversible"},
				{Name: "edits", When: `tool == "Edit"`, Reversibility: "reversible"},
				{Name: "fetches", When: `tool == "WebFetch"`, Reversibility: "reversible"},
			}},
		}
		m := apptest.Start(t, s)
		ops, admin := client.New(m.URL, apptest.OpTok), client.New(m.URL, m.AdminToken)
		always := client.AnswerRequest{ChosenOptionID: core.ApproveOption, Standing: &core.StandingRequest{Scope: core.StandingRun}}

		// The first Bash call is asked, and approved with "don't ask
		// again": allowed, with no rule handed to the host.
		first := claudePrompt(t, m, "Bash", map[string]any{"command": "npm test"})
		id := parked(t, ops)
		if q, err := ops.Get(t.Context(), id); err != nil || q.Reversibility != core.Reversible || q.Call == nil || q.Call.Standing == nil {
			t.Fatalf("npm test asked as %+v (%v): want reversible, offering a standing approval", q, err)
		}
		if _, err := ops.Answer(t.Context(), id, always); err != nil {
			t.Fatal(err)
		}
		if out := first.decided(t); out != `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}` {
			t.Fatalf("npm test: %s", out)
		}

		// The session's next Bash call: allowed at once, nobody asked.
		next := claudePrompt(t, m, "Bash", map[string]any{"command": "npm run lint"})
		if out := next.decided(t); !strings.Contains(out, `"behavior":"allow"`) {
			t.Fatalf("npm run lint: %s", out)
		}
		if list, err := ops.List(t.Context(), "", 50); err != nil || len(list.Questions) != 0 {
			t.Fatalf("open after a call the standing approval covers: %+v, %v", list, err)
		}

		// A rm -rf is not covered: asked as hard to reverse, of two.
		rm := claudePrompt(t, m, "Bash", map[string]any{"command": "rm -rf build"})
		id = parked(t, ops)
		q, err := ops.Get(t.Context(), id)
		if err != nil || q.Reversibility != core.HardToReverse || q.Route != "infra-leads" || q.Quorum != 2 {
			t.Fatalf("rm -rf asked as %+v (%v)", q, err)
		}
		approve := client.AnswerRequest{ChosenOptionID: core.ApproveOption}
		if _, err := ops.Answer(t.Context(), id, approve); err != nil {
			t.Fatal(err)
		}
		if q, err := ops.Get(t.Context(), id); err != nil || !q.Open() {
			t.Fatalf("rm -rf after one of two approvals: %+v, %v", q, err)
		}
		if _, err := admin.Answer(t.Context(), id, approve); err != nil {
			t.Fatal(err)
		}
		if out := rm.decided(t); !strings.Contains(out, `"behavior":"allow"`) {
			t.Fatalf("rm -rf after two approvals: %s", out)
		}

		// Every WebFetch is asked as reversible, so the host may keep a
		// rule for the session too.
		fetch := claudePrompt(t, m, "WebFetch", map[string]any{"url": "https://example.com/docs", "prompt": "summarise"})
		id = parked(t, ops)
		if _, err := ops.Answer(t.Context(), id, always); err != nil {
			t.Fatal(err)
		}
		if out, want := fetch.decided(t), `"updatedPermissions":[{"type":"addRules","rules":[{"toolName":"WebFetch"}],"behavior":"allow","destination":"session"}]`; !strings.Contains(out, want) {
			t.Fatalf("WebFetch with don't ask again: %s, want %s", out, want)
		}
		// So is every Edit, but Claude Code applies a rule for Edit to
		// every tool that edits files: none is handed.
		edit := claudePrompt(t, m, "Edit", map[string]any{"file_path": "main.go", "old_string": "a", "new_string": "b"})
		id = parked(t, ops)
		if _, err := ops.Answer(t.Context(), id, always); err != nil {
			t.Fatal(err)
		}
		if out := edit.decided(t); !strings.Contains(out, `"behavior":"allow"`) || strings.Contains(out, "updatedPermissions") {
			t.Fatalf("Edit with don't ask again: %s, want an allow and no session rule", out)
		}
	})
}

// TestHookEndpointTokens: the HTTP hook is an agent's door: no token is a
// 401 and an operator's a 403, in askbridge's error shape, and neither
// parks anything; an agent's token is heard.
func TestHookEndpointTokens(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	body, err := os.ReadFile(filepath.Join(apptest.HookTestdata, "codex/permission-request.bash.json"))
	if err != nil {
		t.Fatal(err)
	}
	post := func(tok string) (int, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, m.URL+"/v1/hooks/codex?wait=1ms", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, b := post(""); code != http.StatusUnauthorized || !strings.Contains(b, `"code":"forbidden"`) {
		t.Fatalf("no token: %d %s", code, b)
	}
	if code, b := post(apptest.OpTok); code != http.StatusForbidden || !strings.Contains(b, "hooks are answered for agent tokens") {
		t.Fatalf("an operator's token: %d %s", code, b)
	}
	ops := client.New(m.URL, apptest.OpTok)
	if list, err := ops.List(t.Context(), "", 50); err != nil || len(list.Questions) != 0 {
		t.Fatalf("parked by refused hooks: %+v, %v", list, err)
	}
	if code, b := post(apptest.AgentA); code != http.StatusOK || b != "" {
		t.Fatalf("an agent's token, its wait run out: %d %q, want 200 and no decision", code, b)
	}
}

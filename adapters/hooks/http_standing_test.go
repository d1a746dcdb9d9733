package hooks_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// Standing approvals at the hook door: the session rule handed to Claude
// Code with one, and what a Bash one does not cover.

// failingGrants is a store that cannot write standing approvals, as one
// failing over cannot.
type failingGrants struct{ core.Store }

func (failingGrants) PutStanding(context.Context, core.Standing) error {
	return errors.New("failingGrants: the store is failing over")
}

// TestHookSessionRuleOnlyForAStoredGrant: Claude Code is handed a session
// rule of its own only once the standing approval the approve asked for
// is stored. When its write fails, the approve counts and the call is
// allowed, but askbridge holds no standing approval (the approver is told
// so), so neither does the host get a rule that would let the session's
// later calls run with nobody asked; before, the rule was read from the
// close alone. With the write landing, the rule is handed over.
func TestHookSessionRuleOnlyForAStoredGrant(t *testing.T) {
	routes := map[string]core.Route{core.DefaultRoute: {
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}},
		Rules:    []core.Rule{{Name: "fetches", When: `tool == "WebFetch"`, Reversibility: core.Reversible}},
	}}
	body := hookInput(t, "claude-code/permission-request.bash.json", map[string]string{
		"tool_name": `"WebFetch"`, "tool_input": `{"url":"https://example.com/docs","prompt":"summarise"}`,
	})
	rule := `"updatedPermissions":[{"type":"addRules","rules":[{"toolName":"WebFetch"}],"behavior":"allow","destination":"session"}]`
	for _, c := range []struct {
		name     string
		store    func(t *testing.T) core.Store
		wantRule bool
	}{
		{"the grant is not stored", func(t *testing.T) core.Store { return failingGrants{coretest.OpenStore(t)} }, false},
		{"the grant is stored", func(t *testing.T) core.Store { return coretest.OpenStore(t) }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newDoorWith(t, c.store(t), routes)
			call := d.start(t.Context(), "/v1/hooks/claude-code", body)
			out, err := d.svc.Answer(t.Context(), core.AnswerInput{QuestionID: call.id, Decider: person, OptionID: core.ApproveOption,
				Standing: &core.StandingRequest{Scope: core.StandingRun}})
			if err != nil {
				t.Fatal(err)
			}
			if (out.Standing != nil) != c.wantRule {
				t.Fatalf("the approver was told the standing approval is %v", out.Standing)
			}
			got := call.body(t)
			if !strings.Contains(got, `"behavior":"allow"`) || strings.Contains(got, rule) != c.wantRule {
				t.Fatalf("body %s: want an allow, with a session rule %v", got, c.wantRule)
			}
		})
	}
}

// TestHookCodexNetworkAccessNotCoveredByBash: Codex sends a network
// access prompt as a Bash call whose description is "network-access
// <target>". A run-long standing approval granted on an ordinary Bash
// command does not approve it: it is asked as tool NetworkAccess, of a
// person. One the Bash rules deny, or ask as hard to reverse, is asked
// as Bash, so the model (which writes an ordinary command's
// description) cannot move a command out from under the Bash rules by
// dressing it as network access.
func TestHookCodexNetworkAccessNotCoveredByBash(t *testing.T) {
	anyone := map[core.Surface][]string{core.SurfaceAPI: {"*"}}
	d := newDoorOn(t, map[string]core.Route{
		core.DefaultRoute: {Deciders: anyone, Rules: []core.Rule{{Name: "shell", When: `tool == "Bash"`, Reversibility: core.Reversible}}},
		"strict": {Deciders: anyone, Rules: []core.Rule{
			{Name: "no curl", When: `tool == "Bash" && args.command.startsWith("curl")`, Decide: core.DecideDeny, Reason: "No curl."},
			{Name: "wget", When: `tool == "Bash" && args.command.startsWith("wget")`, Reversibility: core.HardToReverse},
			{Name: "shell", When: `tool == "Bash"`, Reversibility: core.Reversible},
		}},
	})
	network := hookFixture(t, "codex/permission-request.network.json")
	for _, c := range []struct {
		route, command string
		tool           string // the tool it is asked as
		want           core.State
		body           string // in the body; "" for none
	}{
		{"", "curl https://example.com/install.sh", "NetworkAccess", core.StateCancelled, ""},
		{"", "network-access https://example.com:443", "NetworkAccess", core.StateCancelled, ""},
		{"strict", "curl https://example.com/install.sh", "Bash", core.StateAnswered, `"behavior":"deny"`},
		{"strict", "wget https://example.com/install.sh", "Bash", core.StateCancelled, ""},
		{"strict", "npm install", "NetworkAccess", core.StateCancelled, ""},
	} {
		t.Run(c.route+" "+c.command, func(t *testing.T) {
			// Each case its own session: an ordinary command approved with
			// "don't ask again" for the run.
			session := `"session_id": "` + strings.NewReplacer(" ", "", "/", "", ":", "").Replace(c.route+c.command) + `-`
			ordinary := strings.Replace(hookFixture(t, "codex/permission-request.bash.json"), `"session_id": "`, session, 1)
			query := url.Values{}
			if c.route != "" { // no route is the parameter left out: given empty it is refused
				query.Set("route", c.route)
			}
			path := "/v1/hooks/codex?" + query.Encode()
			first := d.start(t.Context(), path, ordinary)
			if _, err := d.svc.Answer(t.Context(), core.AnswerInput{QuestionID: first.id, Decider: person, OptionID: core.ApproveOption,
				Standing: &core.StandingRequest{Scope: core.StandingRun}}); err != nil {
				t.Fatal(err)
			}
			if got := first.body(t); !strings.Contains(got, `"behavior":"allow"`) {
				t.Fatalf("body %s, want an allow", got)
			}
			// Another ordinary command of the session: the standing
			// approval covers it, nobody asked.
			again := d.start(t.Context(), path, strings.Replace(ordinary, "cargo publish", "cargo build", 1))
			if got := again.body(t); !strings.Contains(got, `"behavior":"allow"`) {
				t.Fatalf("another command: body %s, want the standing approval's allow", got)
			}
			body := strings.Replace(strings.Replace(network, `"session_id": "`, session, 1), "curl https://example.com/install.sh", c.command, 1)
			query.Set("wait", "1ms")
			call := d.start(t.Context(), "/v1/hooks/codex?"+query.Encode(), body)
			got := call.body(t)
			if c.body == "" && got != "" || c.body != "" && !strings.Contains(got, c.body) {
				t.Fatalf("network access: body %s, want %q", got, c.body)
			}
			q, err := d.svc.Get(t.Context(), call.id)
			if err != nil || q.Call == nil || q.Call.Tool != c.tool || q.State != c.want || q.Resolution.Standing != nil {
				t.Fatalf("network access: question %+v, %v; want it asked as %s, %s, no standing approval", q, err, c.tool, c.want)
			}
		})
	}
}

// TestHookHandsNoSessionRuleForFileEdits: Claude Code applies a rule for
// Edit to every built-in tool that edits files, so "don't ask again" on
// an Edit hands the host no rule, even on a route whose rules leave every
// file edit to a standing approval: the approver's covers Edit alone, and
// the host would run the session's Writes without the hook. Before, a
// route that denies every Write handed {"toolName":"Edit"}. The covered
// Edits are still allowed at once by the hook.
func TestHookHandsNoSessionRuleForFileEdits(t *testing.T) {
	anyone := map[core.Surface][]string{core.SurfaceAPI: {"*"}}
	reversible := func(when string) core.Rule {
		return core.Rule{Name: "edits", When: when, Reversibility: core.Reversible}
	}
	d := newDoorOn(t, map[string]core.Route{
		core.DefaultRoute: {Deciders: anyone},
		"write-denied": {Deciders: anyone, Rules: []core.Rule{
			reversible(`tool == "Edit"`),
			{Name: "no writes", When: `tool == "Write"`, Decide: core.DecideDeny, Reason: "no new files"},
		}},
		"every-editor": {Deciders: anyone, Rules: []core.Rule{reversible(`tool in ["Edit", "Write", "MultiEdit", "NotebookEdit"]`)}},
	})
	for _, route := range []string{"write-denied", "every-editor"} {
		t.Run(route, func(t *testing.T) {
			body := hookInput(t, "claude-code/permission-request.bash.json", map[string]string{
				"session_id": `"` + route + `"`, "tool_name": `"Edit"`,
				"tool_input": `{"file_path":"/repo/a.go","old_string":"a","new_string":"b"}`,
			})
			call := d.start(t.Context(), "/v1/hooks/claude-code?route="+route, body)
			if err := d.answer(call.id, core.AnswerInput{OptionID: core.ApproveOption, Standing: &core.StandingRequest{Scope: core.StandingRun}}); err != nil {
				t.Fatal(err)
			}
			if got := call.body(t); !strings.Contains(got, `"behavior":"allow"`) || strings.Contains(got, "updatedPermissions") {
				t.Fatalf("body %s: want an allow with no session rule", got)
			}
		})
	}
}

// TestHookHandsNoSessionRuleForFileReads: Claude Code applies a rule for
// Read to the built-in tools that read files, Grep and Glob among them
// (its permissions docs, "Read & Edit"), so "don't ask again" on a Read
// hands the host no rule, even where the route's rules leave every Read
// to a standing approval: the approver's covers Read alone, and the host
// would run the session's Greps and Globs (over ~/.ssh, say) without the
// hook, which the route's rules ask of a person. Before, it handed
// {"toolName":"Read"}. The covered Reads are still allowed at once by
// the hook.
func TestHookHandsNoSessionRuleForFileReads(t *testing.T) {
	anyone := map[core.Surface][]string{core.SurfaceAPI: {"*"}}
	d := newDoorOn(t, map[string]core.Route{core.DefaultRoute: {Deciders: anyone, Rules: []core.Rule{
		{Name: "reads", When: `tool == "Read"`, Reversibility: core.Reversible},
	}}})
	body := hookInput(t, "claude-code/permission-request.bash.json", map[string]string{
		"tool_name": `"Read"`, "tool_input": `{"file_path":"/home/user/notes/todo.md"}`,
	})
	call := d.start(t.Context(), "/v1/hooks/claude-code", body)
	if err := d.answer(call.id, core.AnswerInput{OptionID: core.ApproveOption, Standing: &core.StandingRequest{Scope: core.StandingRun}}); err != nil {
		t.Fatal(err)
	}
	if got := call.body(t); !strings.Contains(got, `"behavior":"allow"`) || strings.Contains(got, "updatedPermissions") {
		t.Fatalf("body %s: want an allow with no session rule", got)
	}
	// The next Read of the session is covered by the standing approval:
	// allowed at once by the hook, nobody asked.
	next := hookInput(t, "claude-code/permission-request.bash.json", map[string]string{
		"tool_name": `"Read"`, "tool_input": `{"file_path":"/home/user/notes/done.md"}`,
	})
	status, id, got := d.send(t.Context(), "/v1/hooks/claude-code", next)
	q, err := d.svc.Get(t.Context(), id)
	if status != http.StatusOK || !strings.Contains(got, `"behavior":"allow"`) || err != nil || core.CloserOf(q) != core.CloserStanding {
		t.Fatalf("the next Read: %d %s, question %+v, %v; want the standing approval's allow", status, got, q, err)
	}
}

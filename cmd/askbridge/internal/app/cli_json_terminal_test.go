package app_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// hiddenRune is the first rune of s that a terminal would act on or show
// as nothing, and whether there is one: what --json output must escape.
// The line feeds of JSON's own layout are its only controls.
func hiddenRune(s string) (rune, bool) {
	for _, r := range s {
		if r != '\n' && (core.IsTextControl(r) || fence.IsInvisible(r)) {
			return r, true
		}
	}
	return 0, false
}

// sameArguments reports whether a and b are the same arguments, however
// laid out and escaped.
func sameArguments(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	ca, err := core.CanonicalArguments(a)
	if err != nil {
		t.Fatalf("arguments %s: %v", a, err)
	}
	cb, err := core.CanonicalArguments(b)
	if err != nil {
		t.Fatalf("arguments %s: %v", b, err)
	}
	return string(ca) == string(cb)
}

// TestCLIJSONEscapesWhatATerminalWouldObey: every --json output (show,
// wait, questions) and the events lines write an agent's arguments and a
// person's words with their C1 controls (U+009B is a terminal's CSI),
// bidi overrides and invisible characters as JSON escapes, which decode
// to the same text: a script reads the same values, an operator's
// terminal cannot be repainted or the arguments reordered. Asks refuse
// such characters in a question's text but not in a call's arguments,
// nor do answers in a person's reason. Before, encoding/json wrote them
// as they were (it escapes only C0 controls, U+2028 and U+2029).
func TestCLIJSONEscapesWhatATerminalWouldObey(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	env := cliEnv(m)
	agent := client.New(m.URL, apptest.AgentA)
	args := []byte(`{"path":"/srv/report\u202egnp.exe","note":"a\u009b2Jb","hidden":"x\u200by\udb40\udc41"}`)
	closed, err := agent.Ask(t.Context(), client.AskRequest{Kind: core.KindApproval, Question: "Open it?", Tool: "open",
		Arguments: args, RunID: "run-json", ToolCallID: "toolu_1", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	reason := "no\u202e way\u0085"
	if _, err := client.New(m.URL, apptest.OpTok).Answer(t.Context(), closed.ID, client.AnswerRequest{ChosenOptionID: core.DenyOption, Answer: reason}); err != nil {
		t.Fatalf("the deny: %v", err)
	}
	open, err := agent.Ask(t.Context(), client.AskRequest{Kind: core.KindApproval, Question: "Open it too?", Tool: "open",
		Arguments: args, RunID: "run-json", ToolCallID: "toolu_2", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := client.New(m.URL, apptest.OpTok).Get(t.Context(), closed.ID)
	if err != nil {
		t.Fatal(err)
	}

	for _, cmd := range [][]string{
		{"show", string(closed.ID), "--json"},
		{"wait", string(closed.ID), "--json"},
		{"questions", "--json"},
		{"events"},
	} {
		code, out, errb := runAll(t.Context(), env, "", cmd...)
		if code != 0 && !(cmd[0] == "wait" && code == app.ExitDenied) {
			t.Fatalf("%q: exit %d, %s", cmd, code, errb)
		}
		if r, ok := hiddenRune(out); ok {
			t.Errorf("%q writes U+%04X as it is:\n%s", cmd, r, out)
		}
		switch cmd[0] {
		case "show":
			var got client.Question
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("show --json is not JSON: %v\n%s", err, out)
			}
			if !sameArguments(t, got.Call.Arguments, stored.Call.Arguments) || got.Resolution.Reason != stored.Resolution.Reason ||
				!strings.Contains(got.Resolution.Reason, "\u202e") {
				t.Errorf("show --json reads back as arguments %s, reason %q; the API has %s, %q",
					got.Call.Arguments, got.Resolution.Reason, stored.Call.Arguments, stored.Resolution.Reason)
			}
		case "questions":
			var got []client.Question
			if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != 1 || got[0].ID != open.ID ||
				!sameArguments(t, got[0].Call.Arguments, stored.Call.Arguments) {
				t.Errorf("questions --json reads back as %+v, %v", got, err)
			}
		}
	}
}

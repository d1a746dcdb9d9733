package app_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// TestCLIAskNoWaitRefusesJSON: "ask --no-wait --json" is refused as bad
// usage (exit 2) with nothing asked: --json prints the wait response,
// and --no-wait waits for none. Before, --json was dropped without a
// word and the bare id printed, which a script parsing JSON cannot read.
func TestCLIAskNoWaitRefusesJSON(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	code, out, errb := runAll(t.Context(), cliEnv(m), "", "ask", "--no-wait", "--json", "--reversibility", "reversible", "--question", "Which region?")
	if code != app.ExitUsage || out != "" || !strings.Contains(errb, "--json") || !strings.Contains(errb, "askbridge wait ID --json") {
		t.Fatalf("ask --no-wait --json: exit %d, stdout %q, stderr %q; want exit 2, nothing printed, and how to get the JSON", code, out, errb)
	}
	if l, err := client.New(m.URL, m.AdminToken).List(t.Context(), "", 10); err != nil || len(l.Questions) != 0 {
		t.Fatalf("open questions %+v, %v; want none", l, err)
	}
}

// TestCLIErrorsSayAskbridgeOnce: a refusal from the server is printed
// once prefixed, "askbridge: HTTP 409 conflict: ...". Before, every
// error the API gave read "askbridge: askbridge: HTTP ...".
func TestCLIErrorsSayAskbridgeOnce(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	q, err := client.New(m.URL, apptest.AgentA).Ask(t.Context(), client.AskRequest{Kind: core.KindClarification, Question: "Which region?",
		RunID: "run-words", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	env := cliEnv(m)
	if code, _, errb := runAll(t.Context(), env, "", "answer", string(q.ID), "--text", "eu-west-1"); code != 0 {
		t.Fatalf("the answer: exit %d, %s", code, errb)
	}
	code, _, errb := runAll(t.Context(), env, "", "answer", string(q.ID), "--text", "us-east-1")
	if want := "askbridge: HTTP 409 conflict: question " + string(q.ID) + " was already closed by "; code != app.ExitError || !strings.HasPrefix(errb, want) {
		t.Fatalf("a second answer: exit %d, stderr %q; want exit 1 and %q", code, errb, want)
	}
}

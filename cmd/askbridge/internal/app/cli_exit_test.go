package app_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// cliEnv is the environment of a CLI that reaches m with the admin token.
func cliEnv(m *app.Main) func(string) string { return envAt(m.URL, m.AdminToken) }

// batchAsk is ask's arguments for a batch of two calls.
var batchAsk = []string{"ask", "--reversibility", "reversible", "--question", "Delete both?",
	"--call", `call_a|rm|{"path":"a"}`, "--call", `call_b|rm|{"path":"b"}`}

// askBatch asks a batch of two calls without waiting and returns its id.
func askBatch(t *testing.T, env func(string) string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if c := app.Run(t.Context(), append(slices.Clone(batchAsk), "--no-wait"), env, nil, &out, &errb); c != 0 {
		t.Fatalf("ask a batch: %d %s", c, errb.String())
	}
	return strings.TrimSpace(out.String())
}

// TestCLIBatchExitCodes: a batch closed by its calls' decisions exits 0
// only when every call was approved: 7 when none was, 8 when some were,
// from ask (which blocks) as from wait. Before, both exited 0, so
// "ask ... && run-calls" ran calls a human had denied.
func TestCLIBatchExitCodes(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	env := cliEnv(m)
	for _, c := range []struct {
		name    string
		answers [][]string
		want    int
	}{
		{"every call denied", [][]string{{"--option", "deny", "--text", "no"}}, app.ExitDenied},
		{"one denied, one approved", [][]string{{"--call", "call_a=deny"}, {"--call", "call_b=approve"}}, app.ExitPartlyApproved},
		{"every call approved", [][]string{{"--option", "approve"}}, app.ExitAnswered},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := askBatch(t, env)
			for _, a := range c.answers {
				var out, errb bytes.Buffer
				if code := app.Run(t.Context(), append([]string{"answer", id}, a...), env, nil, &out, &errb); code != 0 {
					t.Fatalf("answer %v: %d %s", a, code, errb.String())
				}
			}
			var out, errb bytes.Buffer
			if code := app.Run(t.Context(), []string{"wait", id}, env, nil, &out, &errb); code != c.want {
				t.Fatalf("wait: exit %d, want %d\n%s%s", code, c.want, out.String(), errb.String())
			}
		})
	}

	// ask itself, blocking until every call is denied.
	id, ended := asking(t, env, batchAsk)
	var out, errb bytes.Buffer
	if c := app.Run(t.Context(), []string{"answer", string(id), "--option", "deny"}, env, nil, &out, &errb); c != 0 {
		t.Fatalf("deny all: %d %s", c, errb.String())
	}
	if c, printed := ended(); c != app.ExitDenied {
		t.Fatalf("ask of a batch whose every call was denied exited %d\n%s", c, printed)
	}
}

// TestCLIAnswerBatchPartWording: deciding some calls of a batch says how
// many calls of how many are decided, not "items" of a form.
func TestCLIAnswerBatchPartWording(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	env := cliEnv(m)
	id := askBatch(t, env)
	var out, errb bytes.Buffer
	if c := app.Run(t.Context(), []string{"answer", id, "--call", "call_a=approve"}, env, nil, &out, &errb); c != 0 {
		t.Fatalf("answer one call: %d %s", c, errb.String())
	}
	if want := "decided 1 of 2 calls of " + id + "; the batch stays open\n"; out.String() != want {
		t.Fatalf("answer printed %q, want %q", out.String(), want)
	}
}

// TestCLIAskRefusesBadArgumentsAtOnce: arguments that are not JSON are
// bad usage (exit 2) before anything is sent, not an ask retried for
// seconds and reported as maybe asked.
func TestCLIAskRefusesBadArgumentsAtOnce(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	env := cliEnv(m)
	for _, args := range [][]string{
		{"--tool", "rm", "--args", "{bad"},
		{"--call", `call_a|rm|{"path":"a"}`, "--call", "call_b|rm|{bad"},
	} {
		var out, errb bytes.Buffer
		code := app.Run(t.Context(), append([]string{"ask", "--reversibility", "reversible", "--question", "Delete?"}, args...), env, nil, &out, &errb)
		if code != app.ExitUsage || strings.Contains(errb.String(), "may have been asked") || !strings.Contains(errb.String(), "not JSON") {
			t.Errorf("ask %v: exit %d, stderr %q; want exit 2, saying the arguments are not JSON, not that it may have been asked", args, code, errb.String())
		}
	}
	if l, err := client.New(m.URL, m.AdminToken).List(t.Context(), "", 10); err != nil || len(l.Questions) != 0 {
		t.Fatalf("open questions %+v, %v; want none", l, err)
	}
}

// TestCLIWaitSaysTheQuestionStaysOpen: wait stopped (SIGTERM, Ctrl-C)
// says, as ask does, that the question stays open.
func TestCLIWaitSaysTheQuestionStaysOpen(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	env := cliEnv(m)
	q, err := client.New(m.URL, apptest.AgentA).Ask(t.Context(), client.AskRequest{Kind: core.KindClarification, Question: "Which region?",
		Reversibility: core.Reversible, RunID: "run-1", ToolCallID: "toolu_1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	var out, errb bytes.Buffer
	if c := app.Run(ctx, []string{"wait", string(q.ID)}, env, nil, &out, &errb); c != app.ExitError ||
		!strings.Contains(errb.String(), "stopped waiting; question "+string(q.ID)+" stays open") {
		t.Fatalf("wait stopped: exit %d, stderr %q", c, errb.String())
	}
}

// TestCLIAskChecksItsAskFirst: an ask the server would refuse (no
// question, an unknown reversibility, a decision of one option) is a
// usage error, exit 2, with nothing sent; and --timeout reads the same
// forms as every other door (1d12h). Before, the request went out and the
// CLI exited 1 (with the server down, after retries and a word that the
// question may have been asked), and --timeout took Go's forms alone.
func TestCLIAskChecksItsAskFirst(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	env := cliEnv(m)
	for _, args := range [][]string{
		{"--reversibility", "reversible"},
		{"--question", "Deploy?", "--reversibility", "sometimes"},
		{"--question", "Which?", "--reversibility", "reversible", "--option", "a|A|fast", "--recommend", "a"},
	} {
		var out, errb bytes.Buffer
		if code := app.Run(t.Context(), append([]string{"ask", "--no-wait"}, args...), env, nil, &out, &errb); code != app.ExitUsage ||
			strings.Contains(errb.String(), "may have been asked") {
			t.Errorf("ask %v: exit %d, stderr %q; want exit 2", args, code, errb.String())
		}
	}
	if l, err := client.New(m.URL, m.AdminToken).List(t.Context(), "", 10); err != nil || len(l.Questions) != 0 {
		t.Fatalf("open questions %+v, %v; want none", l, err)
	}
	var out, errb bytes.Buffer
	if code := app.Run(t.Context(), []string{"ask", "--no-wait", "--question", "Deploy?", "--reversibility", "reversible", "--timeout", "1d12h"}, env, nil, &out, &errb); code != app.ExitAnswered {
		t.Fatalf("ask --timeout 1d12h: exit %d, stderr %q", code, errb.String())
	}
	q, err := client.New(m.URL, m.AdminToken).Get(t.Context(), core.QuestionID(strings.TrimSpace(out.String())))
	if err != nil || time.Duration(q.Timeout) != 36*time.Hour {
		t.Fatalf("asked with timeout %v, %v; want 36h", q, err)
	}
}

// TestCLIApprovedWithEditsExitCode: an approval approved only with
// arguments an approver changed exits 9, not 0: "ask ... && make-the-call"
// would make the call as asked, which the approver replaced. Before, it
// exited 0.
func TestCLIApprovedWithEditsExitCode(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	env := cliEnv(m)
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := app.Run(t.Context(), args, env, nil, &out, &errb)
		return code, strings.TrimSpace(out.String()) + errb.String()
	}
	for _, c := range []struct {
		name   string
		answer []string
		want   int
	}{
		{"approved as asked", []string{"--option", "approve"}, app.ExitAnswered},
		{"approved with a changed path", []string{"--option", "approve", "--args", `{"path":"/tmp/x"}`}, app.ExitApprovedEdited},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, id := run("ask", "--reversibility", "reversible", "--question", "Delete?", "--tool", "rm",
				"--args", `{"path":"/"}`, "--editable", "path", "--no-wait")
			if code != 0 {
				t.Fatalf("ask: %d %s", code, id)
			}
			if code, out := run(append([]string{"answer", id}, c.answer...)...); code != 0 {
				t.Fatalf("answer: %d %s", code, out)
			}
			if code, out := run("wait", id); code != c.want {
				t.Fatalf("wait: exit %d, want %d\n%s", code, c.want, out)
			}
		})
	}
}

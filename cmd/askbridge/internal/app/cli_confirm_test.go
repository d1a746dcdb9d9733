package app_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// confirmPrompt is what answer asks before it records a hard-to-reverse
// choice typed at a terminal.
const confirmPrompt = "Record this?"

// TestCLIAnswerConfirmsAHardToReverseChoice: "askbridge answer" typed at
// a terminal shows a choice on a hard-to-reverse question (an approve, an
// option, a form's answers) back, whole, and records it only on "yes",
// as the console does; a deny, a decline, a reversible question's choice,
// --yes and a script's answer (stdin not a terminal) take one step.
// Before, "answer ID --option approve", typed from the questions list
// (which shows no arguments), approved a hard-to-reverse call unseen.
func TestCLIAnswerConfirmsAHardToReverseChoice(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	env := cliEnv(m)
	agent, ops := client.New(m.URL, apptest.AgentA), client.New(m.URL, apptest.OpTok)
	n := 0
	ask := func(rev core.Reversibility, req client.AskRequest) core.QuestionID {
		t.Helper()
		n++
		req.RunID, req.Reversibility, req.ToolCallID = "run-confirm", rev, "toolu_"+string(rune('a'+n))
		q, err := agent.Ask(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		return q.ID
	}
	drop := client.AskRequest{Kind: core.KindApproval, Question: "Drop the users table?", Tool: "sql.exec",
		Arguments: []byte(`{"sql":"DROP TABLE users"}`)}
	state := func(id core.QuestionID) *client.Question {
		t.Helper()
		q, err := ops.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}

	t.Run("approve, refused at the prompt", func(t *testing.T) {
		app.SetStdinTerminal(t, true)
		id := ask(core.HardToReverse, drop)
		code, out, errb := runAll(t.Context(), env, "no\n", "answer", string(id), "--option", "approve")
		q := state(id)
		if code != app.ExitError || q.State != core.StateOpen || out != "" {
			t.Fatalf("answered %q at the prompt: exit %d, state %s, stdout %q; want exit 1 and the question open", "no", code, q.State, out)
		}
		for _, want := range []string{confirmPrompt, `"sql": "DROP TABLE users"`, q.Call.ArgumentsSHA256, "sql.exec", "Drop the users table?", "nothing was recorded"} {
			if !strings.Contains(errb, want) {
				t.Errorf("the confirmation leaves out %q:\n%s", want, errb)
			}
		}
	})

	t.Run("approve, confirmed", func(t *testing.T) {
		app.SetStdinTerminal(t, true)
		id := ask(core.HardToReverse, drop)
		code, _, errb := runAll(t.Context(), env, "yes\n", "answer", string(id), "--option", "approve")
		q := state(id)
		if code != 0 || q.State != core.StateAnswered || q.Resolution.Approved == nil || !*q.Resolution.Approved || !strings.Contains(errb, confirmPrompt) {
			t.Fatalf("confirmed with yes: exit %d, state %s, stderr %q; want it approved after the prompt", code, q.State, errb)
		}
	})

	t.Run("a decision's option shows its write-up", func(t *testing.T) {
		app.SetStdinTerminal(t, true)
		id := ask(core.HardToReverse, client.AskRequest{Kind: core.KindDecision, Question: "Which migration?", Options: []core.Option{
			{ID: "inplace", Title: "In place", Writeup: "rewrites every row tonight", Recommended: true}, {ID: "copy", Title: "Copy", Writeup: "twice the disk"}}})
		code, _, errb := runAll(t.Context(), env, "\n", "answer", string(id), "--option", "inplace")
		if q := state(id); code != app.ExitError || q.State != core.StateOpen || !strings.Contains(errb, "In place") || !strings.Contains(errb, "rewrites every row tonight") {
			t.Fatalf("an empty reply: exit %d, state %s, stderr %q; want nothing recorded, the option and its write-up shown", code, q.State, errb)
		}
	})

	t.Run("a batch's approve-all shows every call it approves", func(t *testing.T) {
		app.SetStdinTerminal(t, true)
		id := ask(core.HardToReverse, client.AskRequest{Kind: core.KindApproval, Question: "Remove both?", Calls: []core.CallInput{
			{ToolCallID: "call_a", Tool: "rm", Arguments: []byte(`{"path":"/srv/a"}`)},
			{ToolCallID: "call_b", Tool: "rm", Arguments: []byte(`{"path":"/srv/b"}`)}}})
		if code, _, errb := runAll(t.Context(), env, "", "answer", string(id), "--call", "call_a=deny"); code != 0 || strings.Contains(errb, confirmPrompt) {
			t.Fatalf("a deny of one call: exit %d, stderr %q; want it recorded at once", code, errb)
		}
		code, _, errb := runAll(t.Context(), env, "", "answer", string(id), "--option", "approve")
		if q := state(id); code != app.ExitError || q.State != core.StateOpen || !strings.Contains(errb, `"/srv/b"`) || strings.Contains(errb, `"/srv/a"`) {
			t.Fatalf("approve-all, stdin closed at the prompt: exit %d, state %s, stderr %q; want nothing recorded and the one undecided call shown", code, q.State, errb)
		}
		// A call approved with a reason shows the reason it will carry.
		code, _, errb = runAll(t.Context(), env, "", "answer", string(id), "--call", "call_b=approve", "--text", "checked by hand")
		if q := state(id); code != app.ExitError || q.State != core.StateOpen || !strings.Contains(errb, `"/srv/b"`) || !strings.Contains(errb, "checked by hand") {
			t.Fatalf("one call approved with a reason, stdin closed: exit %d, state %s, stderr %q; want nothing recorded, the call and its reason shown", code, q.State, errb)
		}
	})

	t.Run("one step", func(t *testing.T) {
		for _, c := range []struct {
			name     string
			rev      core.Reversibility
			terminal bool
			args     []string
		}{
			{"a deny", core.HardToReverse, true, []string{"--option", "deny", "--text", "not today"}},
			{"a decline", core.HardToReverse, true, nil},
			{"--yes", core.HardToReverse, true, []string{"--option", "approve", "--yes"}},
			{"a reversible question", core.Reversible, true, []string{"--option", "approve"}},
			{"a script", core.HardToReverse, false, []string{"--option", "approve"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				app.SetStdinTerminal(t, c.terminal)
				id := ask(c.rev, drop)
				cmd := append([]string{"answer", string(id)}, c.args...)
				if c.args == nil {
					cmd = []string{"decline", string(id)}
				}
				code, _, errb := runAll(t.Context(), env, "", cmd...)
				if q := state(id); code != 0 || q.State == core.StateOpen || strings.Contains(errb, confirmPrompt) {
					t.Fatalf("%q: exit %d, state %s, stderr %q; want it recorded without a prompt", cmd, code, q.State, errb)
				}
			})
		}
	})

	t.Run("a closed question is not shown back", func(t *testing.T) {
		app.SetStdinTerminal(t, true)
		id := ask(core.HardToReverse, drop)
		if _, err := ops.Answer(t.Context(), id, client.AnswerRequest{ChosenOptionID: core.DenyOption}); err != nil {
			t.Fatal(err)
		}
		code, _, errb := runAll(t.Context(), env, "", "answer", string(id), "--option", "approve")
		if code != app.ExitError || strings.Contains(errb, confirmPrompt) || !strings.Contains(errb, "already closed by") {
			t.Fatalf("approve of a closed question: exit %d, stderr %q; want the server's word on who closed it, no prompt", code, errb)
		}
	})

	t.Run("stopped at the prompt", func(t *testing.T) {
		app.SetStdinTerminal(t, true)
		id := ask(core.HardToReverse, drop)
		stdin, typing := io.Pipe()
		t.Cleanup(func() { typing.Close() })
		ctx, stop := context.WithCancel(t.Context())
		defer stop()
		var out, errb apptest.SyncBuffer
		errb.Changed = make(chan struct{}, 1)
		done := make(chan int, 1)
		go func() {
			done <- app.Run(ctx, []string{"answer", string(id), "--option", "approve"}, env, stdin, &out, &errb)
		}()
		deadline := time.After(10 * time.Second)
		for !errb.Contains(confirmPrompt) {
			select {
			case <-errb.Changed:
			case <-deadline:
				t.Fatalf("answer never asked to confirm: %q", errb.String())
			}
		}
		stop() // Ctrl-C
		select {
		case code := <-done:
			if q := state(id); code != app.ExitError || q.State != core.StateOpen || !errb.Contains("nothing was recorded") {
				t.Fatalf("stopped at the prompt: exit %d, state %s, stderr %q", code, q.State, errb.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("answer did not stop at Ctrl-C while it waited for a reply: %q", errb.String())
		}
	})
}

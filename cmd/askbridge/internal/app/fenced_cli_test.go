package app_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence/fencetest"
)

// TestCLIPrintsPeoplesWordsOnlyFenced is law 7 at the CLI's door: what
// "askbridge ask" and "askbridge wait" print on stdout for a script or an
// agent to read (printResume, in text and with --json) holds a person's
// words and name only inside fence's wrapping. Each row asks one kind of
// question through the CLI as agent-a ("ask", which waits), has people
// close it with hostile text in every field they write (behind tokens
// whose people have hostile display names), and reads what ask printed,
// then runs "wait" and "wait --json" over it. Every marker must appear
// fenced, and nowhere else, in both outputs; a marker the output never
// carried fails the row too, so a row proves what it plants.
// TestNothingUnfencedReachesAnAgent covers the other doors.
func TestCLIPrintsPeoplesWordsOnlyFenced(t *testing.T) {
	mk := fencetest.New()
	const ops2Tok = "operator-two-token-0123456789"
	m := apptest.Start(t, app.Settings{File: app.File{
		Tokens: []app.TokenFile{{Name: "ops2", Role: "operator", Token: ops2Tok}},
		People: map[string]app.PersonFile{
			"opal": {Name: mk.Carried("the display name of the person behind the ops token"), Tokens: []string{"ops"}},
			"vera": {Name: mk.Carried("the display name of the person behind the ops2 token"), Tokens: []string{"ops2"}},
		},
		Routes: map[string]app.RouteFile{
			core.DefaultRoute: {Deciders: map[string][]string{"api": {"*"}}},
			"pair":            {Deciders: map[string][]string{"api": {"*"}}, Quorum: 2},
		},
	}})
	env := func(k string) string {
		return map[string]string{"ASKBRIDGE_URL": m.URL, "ASKBRIDGE_TOKEN": apptest.AgentA}[k]
	}
	ops, ops2 := client.New(m.URL, apptest.OpTok), client.New(m.URL, ops2Tok)
	answer := func(c *client.Client, req client.AnswerRequest) closer { return answering(t.Context(), c, req) }
	decision := []string{"--option", "pg|Postgres|Operated by us.", "--option", "ddb|DynamoDB|Managed.", "--recommend", "pg"}
	approval := func(tool, args string, more ...string) []string {
		return append([]string{"--tool", tool, "--args", args}, more...)
	}

	cases := []struct {
		name  string
		ask   []string // the CLI's ask flags, past --question and --reversibility
		close closer
		state core.State
	}{
		{"clarification", nil, answer(ops, client.AnswerRequest{Answer: mk.Carried("a clarification's answer")}), core.StateAnswered},
		{"decision with a note", decision,
			answer(ops, client.AnswerRequest{ChosenOptionID: "ddb", Answer: mk.Carried("a decision's note")}), core.StateAnswered},
		{"approval approved with a reason", approval("deploy", `{"env":"prod"}`),
			answer(ops, client.AnswerRequest{ChosenOptionID: core.ApproveOption, Answer: mk.Carried("an approval's reason")}), core.StateAnswered},
		{"approval denied with a reason", approval("drop_table", `{"table":"users"}`),
			answer(ops2, client.AnswerRequest{ChosenOptionID: core.DenyOption, Answer: mk.Carried("a deny reason")}), core.StateAnswered},
		{"approval approved with edits", approval("mv", `{"to":"x"}`, "--editable", "to"),
			answer(ops, client.AnswerRequest{ChosenOptionID: core.ApproveOption,
				Arguments: must(json.Marshal(map[string]string{"to": mk.Carried("an edited argument's value")})), Answer: mk.Carried("an edit's reason")}),
			core.StateAnswered},
		{"batch decided call by call", []string{"--call", `call_a*|write_file|{"path":"a","body":"x"}`,
			"--call", `call_b|write_file|{"path":"b"}`, "--call", `call_c|write_file|{"path":"c"}`}, inTurn(
			answer(ops2, client.AnswerRequest{Calls: []core.CallDecision{
				{ToolCallID: "call_a", OptionID: core.ApproveOption, Reason: mk.Carried("a batch call's approve reason"),
					Arguments: must(json.Marshal(map[string]string{"path": "a", "body": mk.Carried("a batch call's edited argument")}))},
				{ToolCallID: "call_b", OptionID: core.DenyOption, Reason: mk.Carried("a batch call's deny reason")},
			}}),
			answer(ops, client.AnswerRequest{ChosenOptionID: core.ApproveOption, Answer: mk.Carried("a batch's reason for the rest")}),
		), core.StateAnswered},
		{"form with free text", []string{"--item", "Which logger?|slog|zerolog", "--item", "Package name?|ab|askbridge"}, inTurn(
			answer(ops, client.AnswerRequest{Items: []client.ItemAnswer{{ItemID: "q1", OptionID: "o2"}}}),
			answer(ops2, client.AnswerRequest{Items: []client.ItemAnswer{{ItemID: "q2", Text: mk.Carried("a form item's free text")}}}),
		), core.StateAnswered},
		{"quorum of two with comments", approval("rotate_keys", `{"all":true}`, "--route", "pair"), inTurn(
			answer(ops2, client.AnswerRequest{ChosenOptionID: core.ApproveOption, Answer: mk.Carried("a vote's comment")}),
			answer(ops, client.AnswerRequest{ChosenOptionID: core.ApproveOption, Answer: mk.Carried("the deciding vote's comment")}),
		), core.StateAnswered},
	}
	// Each output keeps its own record of the markers seen fenced, so one
	// that only the other carried still fails.
	inText, inJSON := mk.Apart(), mk.Apart()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id, ended := asking(t, env, append([]string{"ask", "--question", "May I? " + c.name, "--reversibility", "hard_to_reverse"}, c.ask...))
			c.close(t, id)
			_, printed := ended()

			// In text, from the ask that waited and from a wait after it:
			// the resume, then a batch's per-call resumes, each under a
			// line naming its tool call id.
			for what, text := range map[string]string{"ask's text": printed, "wait's text": runCLI(t, env, -1, "wait", string(id))} {
				for i, part := range strings.Split(strings.TrimSuffix(text, "\n"), "\n\n== tool call ") {
					if i > 0 {
						call, resume, ok := strings.Cut(part, "\n")
						if !ok || !strings.HasPrefix(call, "call_") {
							t.Fatalf("%s: a batch's call is not under its id:\n%s", what, text)
						}
						part = resume
					}
					inText.Check(t, what, part)
				}
			}

			// As JSON: the whole wait response.
			raw := runCLI(t, env, -1, "wait", string(id), "--json")
			inJSON.CheckJSON(t, "wait --json", []byte(raw), fencetest.ApprovedArguments)
			var res client.WaitResponse
			if err := json.Unmarshal([]byte(raw), &res); err != nil || res.State != c.state {
				t.Fatalf("wait --json: state %q, %v; want %s", res.State, err, c.state)
			}
		})
	}
	inText.CheckCarried(t, "the CLI's text")
	inJSON.CheckCarried(t, "wait --json")
}

// runCLI runs askbridge with args and env and returns its stdout; want is
// the exit code it must end with, or -1 for any.
func runCLI(t *testing.T, env func(string) string, want int, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := app.Run(t.Context(), args, env, nil, &out, &errb); want >= 0 && code != want {
		t.Fatalf("askbridge %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out.String(), errb.String())
	}
	return out.String()
}

// asking runs a blocking "askbridge ask" with args, and returns the id it
// says (on stderr) that it asked and a function that waits for it to
// return and gives its exit code and stdout. SyncBuffer signals Changed
// under the lock its String takes, so no line is missed between them.
func asking(t *testing.T, env func(string) string, args []string) (core.QuestionID, func() (int, string)) {
	t.Helper()
	var out, errb apptest.SyncBuffer
	errb.Changed = make(chan struct{}, 1)
	done := make(chan int, 1)
	go func() { done <- app.Run(t.Context(), args, env, nil, &out, &errb) }()
	ended := func() (int, string) {
		t.Helper()
		select {
		case code := <-done:
			return code, out.String()
		case <-time.After(30 * time.Second):
			t.Fatalf("askbridge ask never returned once its question closed\n%s", errb.String())
			return 0, ""
		}
	}
	deadline := time.After(10 * time.Second)
	for {
		if f := strings.Fields(errb.String()); len(f) > 1 && f[0] == "asked" {
			return core.QuestionID(strings.TrimSuffix(f[1], ";")), ended
		}
		select {
		case <-errb.Changed:
		case code := <-done:
			t.Fatalf("askbridge ask exited %d before it asked\n%s", code, errb.String())
		case <-deadline:
			t.Fatalf("askbridge ask never said what it asked: %q", errb.String())
		}
	}
}

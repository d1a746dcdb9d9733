package app_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// showCommands runs "show ID" and returns each command it prints, as the
// words after "$ askbridge ", with its optional part left out, its quotes
// undone and its placeholders filled: TEXT with text.
func showCommands(t *testing.T, env func(string) string, id core.QuestionID, text string) (string, [][]string) {
	t.Helper()
	code, out, errb := runAll(t.Context(), env, "", "show", string(id))
	if code != 0 {
		t.Fatalf("show: exit %d, %s", code, errb)
	}
	var cmds [][]string
	for line := range strings.Lines(out) {
		_, cmd, ok := strings.Cut(line, "$ askbridge ")
		if !ok {
			continue
		}
		cmd, _, _ = strings.Cut(strings.TrimSpace(cmd), " [")
		var words []string
		for _, w := range strings.Fields(cmd) {
			w = strings.Trim(w, "'")
			words = append(words, strings.ReplaceAll(w, "TEXT", text))
		}
		cmds = append(cmds, words)
	}
	return out, cmds
}

// commandWith is the first of cmds that has every one of words.
func commandWith(t *testing.T, out string, cmds [][]string, words ...string) []string {
	t.Helper()
	for _, c := range cmds {
		all := true
		for _, w := range words {
			all = all && strings.Contains(strings.Join(c, " "), w)
		}
		if all {
			return c
		}
	}
	t.Fatalf("show printed no command with %q:\n%s", words, out)
	return nil
}

// TestCLIShowPrintsWhatItTakesToAnswer: "show" prints what a person needs
// to answer from a terminal, which "questions" leaves out (a decision's
// options, an approval's arguments and whole digest, a form's items, a
// batch's calls), and under each way to answer the command that does it:
// each command printed, run as printed, records that answer.
func TestCLIShowPrintsWhatItTakesToAnswer(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	env := cliEnv(m)
	agent := client.New(m.URL, apptest.AgentA)
	ask := func(req client.AskRequest) core.QuestionID {
		t.Helper()
		req.RunID, req.Reversibility = "run-show", core.Reversible
		q, err := agent.Ask(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		return q.ID
	}
	answer := func(words []string) *client.Question {
		t.Helper()
		code, out, errb := runAll(t.Context(), env, "", words...)
		if code != 0 {
			t.Fatalf("%q: exit %d, %s%s", words, code, out, errb)
		}
		q, err := client.New(m.URL, apptest.OpTok).Get(t.Context(), core.QuestionID(words[1]))
		if err != nil {
			t.Fatal(err)
		}
		return q
	}

	t.Run("decision", func(t *testing.T) {
		id := ask(client.AskRequest{Kind: core.KindDecision, Question: "Which queue?", Options: []core.Option{
			{ID: "sqs", Title: "Amazon SQS", Writeup: "managed", Recommended: true}, {ID: "kafka", Title: "Kafka", Writeup: "ops heavy"}}})
		out, cmds := showCommands(t, env, id, "")
		for _, want := range []string{"Which queue?", "Amazon SQS (recommended)", "managed", "ops heavy"} {
			if !strings.Contains(out, want) {
				t.Errorf("show leaves out %q:\n%s", want, out)
			}
		}
		if q := answer(commandWith(t, out, cmds, "--option kafka")); q.State != core.StateAnswered || q.Resolution.OptionID != "kafka" {
			t.Fatalf("the printed command recorded %s %+v", q.State, q.Resolution)
		}
	})

	t.Run("approval", func(t *testing.T) {
		id := ask(client.AskRequest{Kind: core.KindApproval, Question: "Run the migration?", Tool: "migrate", Arguments: []byte(`{"db":"billing"}`)})
		q, err := client.New(m.URL, apptest.OpTok).Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		out, cmds := showCommands(t, env, id, "")
		for _, want := range []string{`"db": "billing"`, "sha256 " + q.Call.ArgumentsSHA256, "Tool migrate"} {
			if !strings.Contains(out, want) {
				t.Errorf("show leaves out %q:\n%s", want, out)
			}
		}
		if q := answer(commandWith(t, out, cmds, "--option deny")); q.Resolution == nil || q.Resolution.Approved == nil || *q.Resolution.Approved {
			t.Fatalf("the printed command recorded %s %+v", q.State, q.Resolution)
		}
	})

	t.Run("form", func(t *testing.T) {
		id := ask(client.AskRequest{Kind: core.KindForm, Question: "Set up staging", Items: []core.FormItem{
			{ID: "region", Question: "Which region?", Options: []core.FormOption{{ID: "eu", Label: "eu-west-1", Description: "close to the users"}, {ID: "us", Label: "us-east-1"}}},
			{ID: "size", Question: "Node size?", Options: []core.FormOption{{ID: "s", Label: "small"}, {ID: "m", Label: "medium"}}},
		}})
		out, cmds := showCommands(t, env, id, "large")
		if !strings.Contains(out, "close to the users") || !strings.Contains(out, "Node size?") {
			t.Errorf("show leaves out an item or a choice's write-up:\n%s", out)
		}
		answer(commandWith(t, out, cmds, "--item region=eu"))
		_, cmds = showCommands(t, env, id, "large")
		q := answer(commandWith(t, out, cmds, "--item-text size="))
		if q.State != core.StateAnswered || len(q.Answers) != 2 || q.Answers[1].Text != "large" {
			t.Fatalf("the printed commands recorded %s %+v", q.State, q.Answers)
		}
	})

	t.Run("batch", func(t *testing.T) {
		id := ask(client.AskRequest{Kind: core.KindApproval, Question: "Apply both?", Calls: []core.CallInput{
			{ToolCallID: "toolu_1", Tool: "write_file", Arguments: []byte(`{"path":"/a"}`)},
			{ToolCallID: "toolu_2", Tool: "chmod", Arguments: []byte(`{"path":"/b"}`)}}})
		out, cmds := showCommands(t, env, id, "")
		q := answer(commandWith(t, out, cmds, "--call toolu_2=deny"))
		if len(q.Answers) != 1 || q.Answers[0].ItemID != "toolu_2" || q.Answers[0].OptionID != core.DenyOption {
			t.Fatalf("the printed command recorded %+v", q.Answers)
		}
		if !strings.Contains(out, "not from the CLI") {
			t.Errorf("a call's standing approval, which the CLI cannot give, is offered as a command:\n%s", out)
		}
	})

	t.Run("clarification, then closed", func(t *testing.T) {
		id := ask(client.AskRequest{Kind: core.KindClarification, Question: "Which region?"})
		out, cmds := showCommands(t, env, id, "eu-west-1")
		if strings.Contains(out, card0Reply) {
			t.Errorf("show offers a chat reply:\n%s", out)
		}
		answer(commandWith(t, out, cmds, "--text eu-west-1"))
		out, cmds = showCommands(t, env, id, "")
		if len(cmds) != 0 || !strings.Contains(out, "eu-west-1") || !strings.Contains(out, "Answered by") {
			t.Fatalf("a closed question shows its outcome and no command to answer:\n%s", out)
		}
	})
}

// TestCLIShowEscapesWhatPeopleWrote: a person's answer goes to the
// terminal with its control characters escaped, so none of it can clear
// the operator's screen or reverse the text after it.
func TestCLIShowEscapesWhatPeopleWrote(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	env := cliEnv(m)
	q, err := client.New(m.URL, apptest.AgentA).Ask(t.Context(), client.AskRequest{Kind: core.KindClarification, Question: "Which region?",
		RunID: "run-show", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.New(m.URL, apptest.OpTok).Answer(t.Context(), q.ID, client.AnswerRequest{Answer: "eu\x1b[2J\u202ewest"}); err != nil {
		t.Fatalf("the answer: %v", err)
	}
	code, out, errb := runAll(t.Context(), env, "", "show", string(q.ID))
	if code != 0 || strings.ContainsAny(out, "\x1b\u202e") || !strings.Contains(out, `eu\u001b[2J\u202ewest`) {
		t.Fatalf("exit %d (%s), printed %q", code, errb, out)
	}
}

// TestCLIShowEscapesAnItemAnswerWhole: a form item's answer, shown on one
// line, has its control characters escaped and is shown whole. Before,
// the line was cut at its length in bytes, which the escapes outgrow:
// "eu\x1b[2J\u202ewest" showed as "eu\u001b[2J…".
func TestCLIShowEscapesAnItemAnswerWhole(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	env := cliEnv(m)
	q, err := client.New(m.URL, apptest.AgentA).Ask(t.Context(), client.AskRequest{Kind: core.KindForm, Question: "Set up staging",
		RunID: "run-show", Reversibility: core.Reversible, Items: []core.FormItem{
			{ID: "region", Question: "Which region?", Options: []core.FormOption{{ID: "eu", Label: "eu-west-1"}, {ID: "us", Label: "us-east-1"}}},
			{ID: "size", Question: "Node size?", Options: []core.FormOption{{ID: "s", Label: "small"}, {ID: "m", Label: "medium"}}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.New(m.URL, apptest.OpTok).Answer(t.Context(), q.ID, client.AnswerRequest{Items: []client.ItemAnswer{
		{ItemID: "region", Text: "eu\x1b[2J\u202ewest"}}}); err != nil {
		t.Fatalf("the answer: %v", err)
	}
	code, out, errb := runAll(t.Context(), env, "", "show", string(q.ID))
	if code != 0 || strings.ContainsAny(out, "\x1b\u202e") || !strings.Contains(out, `: eu\u001b[2J\u202ewest`+"\n") {
		t.Fatalf("exit %d (%s), printed %q", code, errb, out)
	}
}

// card0Reply is the chat cards' clarification button, which names a
// reply a terminal does not send.
const card0Reply = "Reply to answer"

package console_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// TestARowClosedAtTheAskSaysSo: a question a policy rule decided as it
// was asked is stored open and closed a moment later, so the page may
// draw its row open in between; its row, read closed, carries
// data-at-ask, by which the open inbox drops it (console.js) rather than
// keep a question nobody was ever asked. A question a person answered
// carries no such mark: a row that closes while shown stays.
func TestARowClosedAtTheAskSaysSo(t *testing.T) {
	e := newEnv(t, map[string]core.Route{core.DefaultRoute: {
		Deciders: map[core.Surface][]string{core.SurfaceConsole: {"*"}, core.SurfaceAPI: {"*"}},
		Rules:    []core.Rule{{Name: "reads", When: `tool == "read_file"`, Decide: core.DecideAllow}},
	}})
	b := e.signedIn(opAlice)
	ruled := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Read it?", Tool: "read_file", Arguments: []byte(`{"path":"/tmp/a"}`)})
	if ruled.Open() || !core.DecidedAtAsk(ruled) {
		t.Fatalf("the rule left the question %s, closed by %s", ruled.State, core.CloserOf(ruled))
	}
	if row := b.get("/rows/" + string(ruled.ID)).body; !strings.Contains(row, "data-at-ask") {
		t.Fatalf("the row of a question closed at the ask carries no data-at-ask:\n%s", row)
	}
	asked := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Write it?", Tool: "write_file", Arguments: []byte(`{"path":"/tmp/a"}`)})
	if row := b.get("/rows/" + string(asked.ID)).body; strings.Contains(row, "data-at-ask") {
		t.Fatalf("an open question's row carries data-at-ask:\n%s", row)
	}
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: asked.ID, OptionID: core.ApproveOption,
		Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"}}); err != nil {
		t.Fatal(err)
	}
	if row := b.get("/rows/" + string(asked.ID)).body; strings.Contains(row, "data-at-ask") || !strings.Contains(row, `data-state="answered"`) {
		t.Fatalf("a question a person answered: its row\n%s", row)
	}
}

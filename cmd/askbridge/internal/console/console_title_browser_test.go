package console

import (
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// TestConsoleTabTitleCountsWhatIsOpen: the inbox's tab says how many
// questions are open, and keeps saying it as they are asked and closed,
// so that a person on call with the console in a background tab sees a
// new question arrive without going to it.
func TestConsoleTabTitleCountsWhatIsOpen(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	agent := client.New(m.URL, apptest.AgentA)
	ops := client.New(m.URL, apptest.OpTok)
	br := apptest.NewChrome(t)
	first := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "Which bucket?"})

	tab := br.Tab(t, 1280, 900, false)
	signIn(t, tab, m.URL, apptest.OpTok, "ops")
	title := func() string { return apptest.Eval[string](t, tab, `document.title`) }
	if got := title(); got != "1 open · askbridge console" {
		t.Fatalf("the inbox's title is %q", got)
	}
	second := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "Which region?"})
	waitCard(t, tab, second.ID, "open")
	apptest.Until(t, tab, `document.title === "2 open · askbridge console"`)
	if _, err := ops.Answer(t.Context(), first.ID, client.AnswerRequest{Answer: "logs"}); err != nil {
		t.Fatal(err)
	}
	waitCard(t, tab, first.ID, "answered")
	apptest.Until(t, tab, `document.title === "1 open · askbridge console"`)

	// A question's page keeps the question as its title.
	apptest.GoTo(t, tab, m.URL+"/q/"+string(second.ID))
	waitCard(t, tab, second.ID, "open")
	if got := title(); got != "Which region? · askbridge console" {
		t.Fatalf("a question's page is titled %q", got)
	}
}

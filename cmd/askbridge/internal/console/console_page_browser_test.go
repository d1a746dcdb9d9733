package console

import (
	"fmt"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// TestConsoleQuestionPageFollowsEveryChange: a question's own page is
// live for as long as it is open, not only until the first change. The
// part it fetches again must carry its own re-fetch address, or the
// second change finds nothing on the page to fetch while the page still
// says it is live.
func TestConsoleQuestionPageFollowsEveryChange(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	agent := client.New(m.URL, apptest.AgentA)
	ops := client.New(m.URL, apptest.OpTok)
	br := apptest.NewChrome(t)
	q := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Apply three writes?", Calls: []core.CallInput{
		{ToolCallID: "toolu_1", Tool: "write_file", Arguments: []byte(`{"path":"/a"}`)},
		{ToolCallID: "toolu_2", Tool: "write_file", Arguments: []byte(`{"path":"/b"}`)},
		{ToolCallID: "toolu_3", Tool: "write_file", Arguments: []byte(`{"path":"/c"}`)},
	}})
	tab := br.Tab(t, 1280, 900, false)
	signIn(t, tab, m.URL, apptest.OpTok, "ops")
	apptest.GoTo(t, tab, m.URL+"/q/"+string(q.ID))
	waitLive(t, tab)
	waitCard(t, tab, q.ID, "open")

	decided := func(call string) string {
		return fmt.Sprintf(`document.querySelector("%s li[data-call=%s].decided") !== null`, cardSel(q.ID), call)
	}
	decide := func(call, option string) {
		t.Helper()
		if _, err := ops.Answer(t.Context(), q.ID, client.AnswerRequest{Calls: []core.CallDecision{{ToolCallID: call, OptionID: option}}}); err != nil {
			t.Fatal(err)
		}
	}
	decide("toolu_1", core.ApproveOption)
	apptest.Until(t, tab, decided("toolu_1"))
	decide("toolu_2", core.DenyOption)
	apptest.Until(t, tab, decided("toolu_2"))
	decide("toolu_3", core.ApproveOption)
	waitCard(t, tab, q.ID, "answered")
	// The history below the card follows too: the close is its last row.
	apptest.Until(t, tab, `document.querySelector(".history tbody tr:last-child").innerText.includes("answered")`)
	if apptest.Eval[string](t, tab, `document.body.getAttribute("data-live")`) != "yes" {
		t.Fatal("the page is no longer live")
	}
}

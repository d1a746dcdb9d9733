package console

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// typeEnter types text and then Enter into the field sel of the inbox
// row of question id, and fails t if that sent the row's form: console.js
// marks a row busy as it posts, and swaps it for the server's, with its
// step, in one go. What an earlier answer left on the row is marked first.
func typeEnter(t *testing.T, ctx context.Context, id core.QuestionID, sel, text string) {
	t.Helper()
	row := cardSel(id)
	markSeen(t, ctx, id)
	apptest.Do(t, ctx, chromedp.SendKeys(chromedp.CSS(sel), text+kb.Enter))
	if apptest.Eval[bool](t, ctx, `(function(){ var r = document.querySelector("`+row+`"); return r.getAttribute("aria-busy") === "true" || r.querySelector(".recorded-box:not([data-seen]), .step-problem:not([data-seen])") !== null; })()`) {
		t.Fatalf("Enter in %s sent the form", sel)
	}
}

// TestConsoleEnterSendsNoDecision: Enter in a one-line field of an
// answer form (a batch call's reason, a form item's "Something else",
// a reason in a batch's send-once form) sends nothing. The browser's
// implicit submission clicks a form's first submit button, which would
// approve the call whose reason was written for a deny, or send another
// item's answer; only a button the person presses sends a decision.
func TestConsoleEnterSendsNoDecision(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	agent := client.New(m.URL, apptest.AgentA)
	ops := client.New(m.URL, apptest.OpTok)
	br := apptest.NewChrome(t)

	// Each part answers its own question, so no other answer's redraw
	// of a row lands while it types into it.
	calls := []core.CallInput{
		{ToolCallID: "toolu_1", Tool: "write_file", Arguments: []byte(`{"path":"/a"}`)},
		{ToolCallID: "toolu_2", Tool: "write_file", Arguments: []byte(`{"path":"/b"}`)},
		{ToolCallID: "toolu_3", Tool: "chmod", Arguments: []byte(`{"path":"/c"}`)},
	}
	batch := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Apply three writes?", Calls: calls})
	// The same calls in another run: in one run they would be a resend
	// of the first batch.
	once := ask(t, agent, client.AskRequest{Kind: core.KindApproval, RunID: "run-browser-2", Question: "Apply three more writes?", Calls: calls})
	form := ask(t, agent, client.AskRequest{Kind: core.KindForm, Question: "Set up staging", Items: []core.FormItem{
		{ID: "region", Question: "Which region?", Options: []core.FormOption{{ID: "eu", Label: "eu-west-1"}, {ID: "us", Label: "us-east-1"}}},
		{ID: "size", Question: "Node size?", Options: []core.FormOption{{ID: "s", Label: "small"}, {ID: "m", Label: "medium"}}},
	}})
	tab := br.Tab(t, 1280, 900, false)
	signIn(t, tab, m.URL, apptest.OpTok, "ops")
	for _, q := range []*client.AgentQuestion{batch, once, form} {
		waitCard(t, tab, q.ID, "open")
	}

	// decided is how call id of question qid stands, as the API tells it.
	decided := func(qid core.QuestionID, id string) *core.ItemAnswer {
		q := getQ(t, ops, qid)
		for _, co := range core.CallOutcomes(&core.Question{Calls: q.Calls, Answers: q.Answers}) {
			if co.Call.ToolCallID == id {
				return co.Decision
			}
		}
		t.Fatalf("no call %s", id)
		return nil
	}

	t.Run("a batch call's reason", func(t *testing.T) {
		openRow(t, tab, batch.ID)
		typeEnter(t, tab, batch.ID, "#reason-"+string(batch.ID)+"-toolu_2", "not this path")
		// The reason was written for a deny: the deny is what counts.
		answerInPlace(t, tab, batch.ID, cardSel(batch.ID)+" form.call-form[data-call=toolu_2] button.deny")
		if d := decided(batch.ID, "toolu_2"); d == nil || d.OptionID != core.DenyOption || d.Text != "not this path" {
			t.Fatalf("the call's decision: %+v", d)
		}
	})

	t.Run("a reason in the batch's send-once form", func(t *testing.T) {
		openRow(t, tab, once.ID)
		apptest.Do(t, tab, chromedp.Click(chromedp.CSS(cardSel(once.ID)+" details.batch-each-fold summary")),
			chromedp.Click(chromedp.CSS(cardSel(once.ID)+` fieldset[data-call=toolu_3] input[value=deny]`)))
		typeEnter(t, tab, once.ID, "#each-reason-"+string(once.ID)+"-toolu_3", "not the permissions")
		if d := decided(once.ID, "toolu_3"); d != nil {
			t.Fatalf("recorded on Enter: %+v", d)
		}
		answerInPlace(t, tab, once.ID, cardSel(once.ID)+" button.send-calls")
		if d := decided(once.ID, "toolu_3"); d == nil || d.OptionID != core.DenyOption || d.Text != "not the permissions" {
			t.Fatalf("the call's decision: %+v", d)
		}
		if d := decided(once.ID, "toolu_1"); d != nil {
			t.Fatalf("a call left undecided was decided: %+v", d)
		}
	})

	t.Run("a form item's own words", func(t *testing.T) {
		openRow(t, tab, form.ID)
		typeEnter(t, tab, form.ID, "#other-"+string(form.ID)+"-size", "large")
		answerInPlace(t, tab, form.ID, cardSel(form.ID)+" fieldset[data-item=size] button.item-one")
		got := getQ(t, ops, form.ID)
		if got.State != core.StateOpen || len(got.Answers) != 1 || got.Answers[0].ItemID != "size" || got.Answers[0].Text != "large" {
			t.Fatalf("recorded: %s %+v", got.State, got.Answers)
		}
	})
}

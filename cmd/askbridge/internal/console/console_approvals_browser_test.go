package console

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/browsertest"
)

// TestConsoleApprovalsInABrowser edits an approval's arguments before
// approving it, and decides a batch one call at a time, then all at once,
// in a real browser against the real program.
func TestConsoleApprovalsInABrowser(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	agent := client.New(m.URL, apptest.AgentA)
	ops := client.New(m.URL, apptest.OpTok)
	br := apptest.NewChrome(t)

	operator := br.Tab(t, 1280, 900, false)
	signIn(t, operator, m.URL, apptest.OpTok, "ops")
	admin := br.Tab(t, 1280, 900, false)
	signIn(t, admin, m.URL, m.AdminToken, "admin")

	t.Run("edit and approve", func(t *testing.T) {
		q := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Write the report?", Tool: "write_file",
			Arguments: []byte(`{"path":"/srv/report.txt","content":"hello"}`), Editable: &core.Editable{Keys: []string{"path"}}})
		apptest.GoTo(t, operator, m.URL+"/q/"+string(q.ID))
		waitLive(t, operator)
		waitCard(t, operator, q.ID, "open")
		editor := "#args-" + string(q.ID)
		if v := apptest.Eval[string](t, operator, `document.querySelector("`+editor+`").value`); v != "{\n  \"content\": \"hello\",\n  \"path\": \"/srv/report.txt\"\n}" {
			t.Fatalf("the editor starts with %q", v)
		}

		// A key that may not change is refused with core's words.
		apptest.Do(t, operator, chromedp.Click(chromedp.CSS(cardSel(q.ID)+" details.edit summary")), chromedp.Clear(chromedp.CSS(editor)), chromedp.SendKeys(chromedp.CSS(editor), `{"path":"/srv/report.txt","content":"bye"}`))
		if status := browsertest.Submit(t, operator, cardSel(q.ID)+" form.edit-form button.edit-approve"); status != http.StatusBadRequest {
			t.Fatalf("a non-editable key: %d", status)
		}
		if p := apptest.Eval[string](t, operator, `document.getElementById("problem").innerText`); !strings.Contains(p, `argument "content" may not be changed`) {
			t.Fatalf("the refusal: %q", p)
		}
		if got := getQ(t, ops, q.ID); got.State != core.StateOpen {
			t.Fatalf("a refused edit changed the question: %s", got.State)
		}

		apptest.GoTo(t, operator, m.URL+"/q/"+string(q.ID))
		waitLive(t, operator)
		apptest.Do(t, operator, chromedp.Click(chromedp.CSS(cardSel(q.ID)+" details.edit summary")), chromedp.Clear(chromedp.CSS(editor)), chromedp.SendKeys(chromedp.CSS(editor), `{"path":"/srv/report-v2.txt","content":"hello"}`))
		if status := browsertest.Submit(t, operator, cardSel(q.ID)+" form.edit-form button.edit-approve"); status != http.StatusOK {
			t.Fatalf("edit and approve: %d", status)
		}
		res := getQ(t, ops, q.ID).Resolution
		if res == nil || res.Approved == nil || !*res.Approved || res.Edit == nil || string(res.Edit.Arguments) != `{"content":"hello","path":"/srv/report-v2.txt"}` {
			t.Fatalf("recorded: %+v", res)
		}
		if text := apptest.Eval[string](t, operator, `document.querySelector("`+cardSel(q.ID)+`").innerText`); !strings.Contains(text, "Approved with changes: path changed") {
			t.Fatalf("the closed card:\n%s", text)
		}
		// The other page closes the card live, with the change.
		waitCard(t, admin, q.ID, "answered")
		if text := apptest.Eval[string](t, admin, `document.querySelector("`+cardSel(q.ID)+`").textContent`); !strings.Contains(text, "Approved with changes: path changed") {
			t.Fatalf("the admin's card:\n%s", text)
		}
	})

	// A refusal records nothing and leaves the question open, so what
	// was typed stays to be put right; only an answer recorded clears
	// the form it came from.
	t.Run("an edit refused in the inbox is kept", func(t *testing.T) {
		q := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Write the notes?", Tool: "write_file",
			Arguments: []byte(`{"path":"/srv/notes.txt","content":"hello"}`), Editable: &core.Editable{Keys: []string{"path"}}})
		apptest.GoTo(t, operator, m.URL+"/")
		waitLive(t, operator)
		waitCard(t, operator, q.ID, "open")
		openRow(t, operator, q.ID)
		editor, edit := "#args-"+string(q.ID), `{"path":"/srv/notes-v2.txt","content":"bye"}`
		apptest.Do(t, operator, chromedp.Click(chromedp.CSS(cardSel(q.ID)+" details.edit summary")), chromedp.Clear(chromedp.CSS(editor)), chromedp.SendKeys(chromedp.CSS(editor), edit),
			chromedp.SendKeys(chromedp.ID("reason-"+string(q.ID)), "moved the file"))
		apptest.Click(t, operator, cardSel(q.ID)+" form.edit-form button.edit-approve")
		apptest.Until(t, operator, `document.querySelector("`+cardSel(q.ID)+` .step-problem") !== null`)
		if p := apptest.Eval[string](t, operator, `document.querySelector("`+cardSel(q.ID)+` .step-problem").innerText`); !strings.Contains(p, `argument "content" may not be changed`) {
			t.Fatalf("the refusal: %q", p)
		}
		if got := getQ(t, ops, q.ID); got.State != core.StateOpen {
			t.Fatalf("a refused edit changed the question: %s", got.State)
		}
		if v := apptest.Eval[string](t, operator, `document.querySelector("`+editor+`").value`); v != edit {
			t.Errorf("the refused edit became %q", v)
		}
		if !apptest.Eval[bool](t, operator, `document.querySelector("`+editor+`").closest("details").open`) {
			t.Error("the editor folded shut")
		}
		if v := apptest.Eval[string](t, operator, `document.querySelector("#reason-`+string(q.ID)+`").value`); v != "moved the file" {
			t.Errorf("the reason became %q", v)
		}
	})

	t.Run("approve one call of a batch, then approve all", func(t *testing.T) {
		q := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Apply three writes?", Calls: []core.CallInput{
			{ToolCallID: "toolu_1", Tool: "write_file", Arguments: []byte(`{"path":"/a"}`)},
			{ToolCallID: "toolu_2", Tool: "write_file", Arguments: []byte(`{"path":"/b"}`)},
			{ToolCallID: "toolu_3", Tool: "chmod", Arguments: []byte(`{"path":"/c"}`)},
		}})
		woke := make(chan *client.WaitResponse, 1)
		go func() {
			res, err := agent.Wait(t.Context(), q.ID)
			if err != nil {
				t.Error(err)
			}
			woke <- res
		}()
		apptest.GoTo(t, operator, m.URL+"/q/"+string(q.ID))
		waitLive(t, operator)
		waitCard(t, admin, q.ID, "open")
		if n := apptest.Eval[int](t, operator, `document.querySelectorAll("`+cardSel(q.ID)+` li.batch-call").length`); n != 3 {
			t.Fatalf("the card lists %d calls", n)
		}
		if status := browsertest.Submit(t, operator, cardSel(q.ID)+` form.call-form[data-call=toolu_2] button.approve`); status != http.StatusOK {
			t.Fatalf("approve one call: %d", status)
		}
		// The admin's page shows the decision live, with who made it.
		apptest.Until(t, admin, `(function(){ var c = document.querySelector("`+cardSel(q.ID)+` li[data-call=toolu_2].decided"); return c !== null && c.textContent.includes("by ops via console"); })()`)
		if apptest.Eval[bool](t, admin, `document.querySelector("`+cardSel(q.ID)+` form.call-form[data-call=toolu_2]") !== null`) {
			t.Fatal("a decided call still offers its buttons")
		}
		if got := getQ(t, ops, q.ID); got.State != core.StateOpen || len(got.Answers) != 1 {
			t.Fatalf("after one call: %s %d", got.State, len(got.Answers))
		}
		apptest.GoTo(t, admin, m.URL+"/q/"+string(q.ID))
		waitLive(t, admin)
		if status := browsertest.Submit(t, admin, cardSel(q.ID)+" button.approve-all"); status != http.StatusOK {
			t.Fatalf("approve all: %d", status)
		}
		got := getQ(t, ops, q.ID)
		if got.State != core.StateAnswered {
			t.Fatalf("after approve all: %s", got.State)
		}
		want := map[string]string{"toolu_1": "admin", "toolu_2": "ops", "toolu_3": "admin"}
		for _, c := range got.Calls {
			var d *core.ItemAnswer
			for i := range got.Answers {
				if got.Answers[i].ItemID == c.ToolCallID {
					d = &got.Answers[i]
				}
			}
			if d == nil || d.OptionID != core.ApproveOption || d.Decider.ID != want[c.ToolCallID] {
				t.Fatalf("%s: %+v", c.ToolCallID, d)
			}
		}
		res := <-woke
		if res == nil || len(res.Calls) != 3 || res.Calls[0].ToolCallID != "toolu_1" || res.Calls[2].ToolCallID != "toolu_3" {
			t.Fatalf("the agent's per-call results: %+v", res)
		}
	})
}

package console

import (
	"fmt"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// voters are the operator tokens of a board that many people sign off on.
func voters(n int) []app.TokenFile {
	out := make([]app.TokenFile, n)
	for i := range out {
		name := fmt.Sprintf("voter-%02d", i+1)
		out[i] = app.TokenFile{Name: name, Role: "operator", Token: app.Secret(name + "-token-0123456789")}
	}
	return out
}

// TestConsoleAtTheLimitsOfAQuestion: the largest questions core takes,
// as a team meets them: a form of four items of four options each, a
// batch of twenty calls, a question as long as core allows, and a
// sign-off most of a board of twelve has voted on. Each row unfolds and
// is answerable; the inbox, the Closed list and the People page pass axe
// and fit a phone.
func TestConsoleAtTheLimitsOfAQuestion(t *testing.T) {
	board := voters(12)
	m := apptest.Start(t, app.Settings{File: app.File{Tokens: board, Routes: map[string]app.RouteFile{
		core.DefaultRoute: {Deciders: map[string][]string{"api": {"*"}, "console": {"*"}}},
		"board":           {Deciders: map[string][]string{"api": {"*"}, "console": {"*"}}, Quorum: 10},
	}}})
	agent := client.New(m.URL, apptest.AgentA)
	long := strings.Repeat("Which of the replicas should take the write traffic while the primary is rebuilt? ", 60)[:core.MaxTextLen]
	var items []core.FormItem
	for i := range core.MaxItems {
		it := core.FormItem{ID: fmt.Sprintf("item%d", i+1), Question: fmt.Sprintf("Setting %d: which of the four should the cluster use?", i+1)}
		for j := range core.MaxItemOptions {
			it.Options = append(it.Options, core.FormOption{ID: fmt.Sprintf("o%d", j+1), Label: fmt.Sprintf("choice %d.%d", i+1, j+1),
				Description: "what choice " + fmt.Sprint(j+1) + " costs and what it buys", Recommended: j == 0})
		}
		items = append(items, it)
	}
	var calls []core.CallInput
	for i := range 20 {
		calls = append(calls, core.CallInput{ToolCallID: fmt.Sprintf("toolu_%02d", i+1), Tool: "write_file",
			Arguments: []byte(fmt.Sprintf(`{"path":"/etc/app/%02d.conf","content":"x"}`, i+1))})
	}
	form := ask(t, agent, client.AskRequest{Kind: core.KindForm, Question: "Set up the staging cluster", Items: items})
	batch := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Write twenty config files?", Calls: calls})
	longQ := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: long})
	signoff := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Route: "board", Question: "Rotate every key?", Tool: "rotate", Arguments: []byte(`{"all":true}`)})
	for _, v := range board[:9] {
		if _, err := client.New(m.URL, string(v.Token)).Answer(t.Context(), signoff.ID, client.AnswerRequest{ChosenOptionID: core.ApproveOption}); err != nil {
			t.Fatal(err)
		}
	}
	all := []*client.AgentQuestion{form, batch, longQ, signoff}

	br := apptest.NewChrome(t)
	for _, width := range []int64{1280, 390} {
		tab := br.Tab(t, width, 900, width < 500)
		signIn(t, tab, m.URL, apptest.OpTok, "ops")
		for _, q := range all {
			waitCard(t, tab, q.ID, "open")
			openRow(t, tab, q.ID)
		}
		apptest.Click(t, tab, cardSel(batch.ID)+" .batch-each-fold > summary")
		if n := apptest.Eval[int](t, tab, `document.querySelectorAll("`+cardSel(form.ID)+` .items-form input[type=radio]").length`); n != 16 {
			t.Errorf("the form offers %d choices, want 16", n)
		}
		if n := apptest.Eval[int](t, tab, `document.querySelectorAll("`+cardSel(batch.ID)+` .batch-each .call-choice").length`); n != 20 {
			t.Errorf("the batch offers %d calls to decide, want 20", n)
		}
		audit(t, tab, fmt.Sprintf("the inbox at %dpx with the largest questions open", width))
		fitsWidth(t, tab, "the inbox with the largest questions open", int(width))
		for _, page := range []string{"/closed", "/people", "/q/" + string(signoff.ID), "/q/" + string(longQ.ID)} {
			apptest.GoTo(t, tab, m.URL+page)
			apptest.Until(t, tab, `document.querySelector("main h1") !== null`)
			audit(t, tab, fmt.Sprintf("%s at %dpx", page, width))
			fitsWidth(t, tab, page, int(width))
		}
	}
}

package console

import (
	"context"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// focusOn moves keyboard focus to what sel finds, as Tab would.
func focusOn(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	if !apptest.Eval[bool](t, ctx, `(function(){ var el = document.querySelector("`+sel+`"); el.focus(); return document.activeElement === el; })()`) {
		t.Fatalf("%s took no focus", sel)
	}
}

// focusedIs fails the test unless keyboard focus is on what sel finds now
// (in the row as drawn again, not the copy it replaced).
func focusedIs(t *testing.T, ctx context.Context, sel, what string) {
	t.Helper()
	if !apptest.Eval[bool](t, ctx, `document.activeElement === document.querySelector("`+sel+`")`) {
		got := apptest.Eval[string](t, ctx, `document.activeElement.tagName + "." + document.activeElement.className`)
		t.Fatalf("%s: the row was drawn again and keyboard focus moved to %s", what, got)
	}
}

// TestConsoleKeepsKeyboardFocusAcrossARedraw: a keyboard user rests on a
// row's button or its summary; someone else acts on the same question
// from the API, and the page draws the row again. Focus stays on that
// button or summary in the fresh copy, and where the fresh copy has no
// such button any more (its call was decided), on the row's summary:
// never thrown back to the top of the page, nor a screen reader's place
// lost.
func TestConsoleKeepsKeyboardFocusAcrossARedraw(t *testing.T) {
	m := apptest.Start(t, app.Settings{File: app.File{Routes: map[string]app.RouteFile{
		core.DefaultRoute: {Deciders: map[string][]string{"api": {"*"}, "console": {"*"}}, MaxQuorum: 3}}}})
	agent := client.New(m.URL, apptest.AgentA)
	ops := client.New(m.URL, apptest.OpTok)
	br := apptest.NewChrome(t)
	q := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Rotate keys?", Tool: "rotate", Arguments: []byte(`{"all":true}`), Quorum: 2})
	batch := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Three writes?", Calls: []core.CallInput{
		{ToolCallID: "toolu_1", Tool: "write_file", Arguments: []byte(`{"path":"/a"}`)},
		{ToolCallID: "toolu_2", Tool: "chmod", Arguments: []byte(`{"path":"/b"}`)},
		{ToolCallID: "toolu_3", Tool: "chown", Arguments: []byte(`{"path":"/c"}`)}}})
	decide := func(call string) {
		t.Helper()
		if _, err := ops.Answer(t.Context(), batch.ID, client.AnswerRequest{Calls: []core.CallDecision{{ToolCallID: call, OptionID: core.DenyOption}}}); err != nil {
			t.Fatal(err)
		}
	}
	tab := br.Tab(t, 1280, 900, false)
	signIn(t, tab, m.URL, m.AdminToken, "admin")
	waitCard(t, tab, q.ID, "open")
	waitCard(t, tab, batch.ID, "open")
	openRow(t, tab, q.ID)
	openRow(t, tab, batch.ID)

	// A button: its twin in the fresh copy.
	approve := cardSel(q.ID) + " form.call-form button.approve"
	focusOn(t, tab, approve)
	if _, err := ops.Answer(t.Context(), q.ID, client.AnswerRequest{ChosenOptionID: core.ApproveOption}); err != nil {
		t.Fatal(err)
	}
	apptest.Until(t, tab, `document.querySelector("`+cardSel(q.ID)+` .tally") !== null && document.querySelector("`+cardSel(q.ID)+`").innerText.includes("1 of 2")`)
	focusedIs(t, tab, approve, "the Approve button")

	// The row's own summary.
	summary := cardSel(batch.ID) + " > summary"
	focusOn(t, tab, summary)
	decide("toolu_1")
	apptest.Until(t, tab, `document.querySelector("`+cardSel(batch.ID)+` li[data-call=toolu_1].decided") !== null`)
	focusedIs(t, tab, summary, "the row's summary")

	// One call's button, while another call is decided.
	deny3 := cardSel(batch.ID) + ` form.call-form[data-call=toolu_3] button.deny`
	focusOn(t, tab, deny3)
	decide("toolu_2")
	apptest.Until(t, tab, `document.querySelector("`+cardSel(batch.ID)+` li[data-call=toolu_2].decided") !== null`)
	focusedIs(t, tab, deny3, "a call's Deny button")

	// That call decided by someone else: its button is gone, and focus
	// rests on the row's summary.
	decide("toolu_3")
	waitCard(t, tab, batch.ID, "answered")
	focusedIs(t, tab, summary, "a decided call's button")
}

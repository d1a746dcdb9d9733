package console

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// drawnLeftToRight reports, for each element sel finds, whether the
// browser draws the first two letters of its first text node (the
// server's "answered by", "(by") left to right, as English reads.
func drawnLeftToRight(t *testing.T, ctx context.Context, sel string) []bool {
	t.Helper()
	return apptest.Eval[[]bool](t, ctx, `Array.from(document.querySelectorAll("`+sel+`")).map(function (by) {
		var n = by.firstChild, r = document.createRange();
		r.setStart(n, 0); r.setEnd(n, 1); var a = r.getBoundingClientRect().left;
		r.setStart(n, 1); r.setEnd(n, 2); var b = r.getBoundingClientRect().left;
		return a < b;
	})`)
}

// TestConsoleDrawsTheServersWordsInOrderAfterAPersonsText: a person's free
// text holding U+202E RIGHT-TO-LEFT OVERRIDE (core refuses it in an
// agent's text, not in a person's answer) is isolated on the console, so
// the server's "answered by <who> at <when>" after it, and a recorded
// line's "(by <who> at <when>)", read as written, however the text tries
// to reach past its isolation.
func TestConsoleDrawsTheServersWordsInOrderAfterAPersonsText(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	agent := client.New(m.URL, apptest.AgentA)
	ops := client.New(m.URL, apptest.OpTok)
	br := apptest.NewChrome(t)
	form := ask(t, agent, client.AskRequest{Kind: core.KindForm, Question: "Set up", Items: []core.FormItem{
		{ID: "region", Question: "Which region?", Options: []core.FormOption{{ID: "eu", Label: "eu"}, {ID: "us", Label: "us"}}},
		{ID: "zone", Question: "Which zone?", Options: []core.FormOption{{ID: "a", Label: "a"}, {ID: "b", Label: "b"}}},
		{ID: "size", Question: "Size?", Options: []core.FormOption{{ID: "s", Label: "s"}, {ID: "m", Label: "m"}}}}})
	// The second also closes an isolate it is not in (U+2069) first.
	if _, err := ops.Answer(t.Context(), form.ID, client.AnswerRequest{Items: []client.ItemAnswer{
		{ItemID: "region", Text: "eu-west-1\u202e"}, {ItemID: "zone", Text: "b\u2069\u202e"}}}); err != nil {
		t.Fatal(err)
	}
	tab := br.Tab(t, 1280, 900, false)
	signIn(t, tab, m.URL, m.AdminToken, "admin")
	waitCard(t, tab, form.ID, "open")
	openRow(t, tab, form.ID)
	shown := drawnLeftToRight(t, tab, cardSel(form.ID)+" .item-answer .by")
	if len(shown) != 2 {
		t.Fatalf("%d item answers shown, want 2", len(shown))
	}
	for i, ok := range shown {
		if !ok {
			t.Errorf("item answer %d: \"answered by ...\" is drawn right to left: the person's U+202E reorders the server's words", i+1)
		}
	}

	// Answered in place, the row's recorded lines say who gave each.
	apptest.Do(t, tab, chromedp.SendKeys(chromedp.CSS(`#other-`+string(form.ID)+`-size`), "large\u202e"))
	answerInPlace(t, tab, form.ID, cardSel(form.ID)+` button[name=item][value=size]`)
	recorded := drawnLeftToRight(t, tab, cardSel(form.ID)+" .recorded-box .by")
	if len(recorded) != 3 {
		t.Fatalf("%d recorded lines name who gave them, want 3", len(recorded))
	}
	for i, ok := range recorded {
		if !ok {
			t.Errorf("recorded line %d: \"(by ...)\" is drawn right to left: the person's U+202E reorders the server's words", i+1)
		}
	}
}

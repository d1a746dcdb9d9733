package console

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// TestConsoleSendingOneItemKeepsTheOthersDrafts: "Send only this answer"
// on one item of a form clears that item's fields alone; what was typed
// or chosen in the other items is still a draft, to be sent later. Both
// ways of sending one item are tried: at once (reversible), and through
// the confirmation step (hard to reverse).
func TestConsoleSendingOneItemKeepsTheOthersDrafts(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	agent := client.New(m.URL, apptest.AgentA)
	ops := client.New(m.URL, apptest.OpTok)
	br := apptest.NewChrome(t)
	tab := br.Tab(t, 1280, 900, false)
	signIn(t, tab, m.URL, apptest.OpTok, "ops")

	items := []core.FormItem{
		{ID: "region", Question: "Region?", Options: []core.FormOption{{ID: "eu", Label: "EU", Recommended: true}, {ID: "us", Label: "US"}}},
		{ID: "size", Question: "Size?", Options: []core.FormOption{{ID: "s", Label: "Small"}, {ID: "l", Label: "Large"}}},
		{ID: "tier", Question: "Tier?", Options: []core.FormOption{{ID: "gold", Label: "Gold"}, {ID: "free", Label: "Free"}}},
	}
	for _, rev := range []core.Reversibility{core.Reversible, core.HardToReverse} {
		t.Run(string(rev), func(t *testing.T) {
			q := ask(t, agent, client.AskRequest{Kind: core.KindForm, Question: "Set-up, " + string(rev) + "?", Reversibility: rev, Items: items})
			waitCard(t, tab, q.ID, "open")
			openRow(t, tab, q.ID)
			item := func(id string) string { return fmt.Sprintf(`%s fieldset[data-item=%s]`, cardSel(q.ID), id) }
			apptest.Do(t, tab,
				chromedp.SendKeys(chromedp.ID("other-"+q.ID+"-size"), "medium, please"),
				chromedp.Click(chromedp.CSS(item("tier")+` input[value=gold]`)),
				chromedp.Click(chromedp.CSS(item("region")+` input[value=eu]`)))
			if rev == core.HardToReverse {
				apptest.Click(t, tab, item("region")+` button.item-one`)
				apptest.Until(t, tab, `document.querySelector("`+cardSel(q.ID)+` .confirm-step") !== null`)
				answerInPlace(t, tab, q.ID, cardSel(q.ID)+" button.confirm-yes")
			} else {
				answerInPlace(t, tab, q.ID, item("region")+` button.item-one`)
			}
			if got := getQ(t, ops, q.ID); got.State != core.StateOpen || len(got.Answers) != 1 {
				t.Fatalf("after one item: %s, %+v", got.State, got.Answers)
			}
			apptest.Until(t, tab, `document.querySelector("`+item("region")+`") === null`)
			if v := apptest.Eval[string](t, tab, `document.getElementById("other-`+string(q.ID)+`-size").value`); v != "medium, please" {
				t.Errorf("the other item's typed answer became %q", v)
			}
			if !apptest.Eval[bool](t, tab, `document.querySelector("`+item("tier")+` input[value=gold]").checked`) {
				t.Error("the other item's choice was cleared")
			}
			// The kept drafts are still the reader's to send.
			apptest.Click(t, tab, cardSel(q.ID)+" button.send-all")
			if rev == core.HardToReverse {
				apptest.Until(t, tab, `document.querySelector("`+cardSel(q.ID)+` .confirm-step") !== null`)
				apptest.Click(t, tab, cardSel(q.ID)+" button.confirm-yes")
			}
			waitCard(t, tab, q.ID, "answered")
			if got := getQ(t, ops, q.ID); len(got.Answers) != 3 {
				t.Fatalf("answers: %+v", got.Answers)
			}
		})
	}
}

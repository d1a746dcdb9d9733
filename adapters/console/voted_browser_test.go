package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/browsertest"
)

// TestAVoteInPlaceTakesTheButtonsAway: alice approves a two-person
// sign-off from its inbox row; the row drawn after her vote says what she
// voted and how far the count has got, and offers her no button to vote
// again, then and after the page is loaded afresh. The page passes axe.
func TestAVoteInPlaceTakesTheButtonsAway(t *testing.T) {
	e := newEnv(t, pairRoutes())
	q := e.ask(core.AskInput{Kind: core.KindApproval, Route: "pair", Text: "Restart the primary?", Tool: "shell", Arguments: []byte(`{"cmd":"restart"}`)})
	row := "#card-" + string(q.ID)
	tab := chrome(t)
	browsertest.Do(t, tab, chromedp.Navigate(e.srv.URL+"/"))
	signInTab(t, tab, opAlice)
	browsertest.Do(t, tab, chromedp.Click(chromedp.CSS(row+" > summary")), chromedp.Click(chromedp.CSS(row+" form.call-form button.approve")))
	browsertest.Until(t, tab, `document.querySelector("`+row+` .recorded-box") !== null`)
	check := func(when string) {
		t.Helper()
		if browsertest.Eval[bool](t, tab, `document.querySelector("`+row+` button.approve, `+row+` button.deny") !== null`) {
			t.Errorf("%s: the row offers alice the vote again", when)
		}
		voted := browsertest.Eval[string](t, tab, `(function () { var v = document.querySelector("`+row+` .voted"); return v ? v.innerText : ""; })()`)
		for _, want := range []string{"You voted to approve", "1 vote is in; 2 people must agree"} {
			if !strings.Contains(voted, want) {
				t.Errorf("%s: the row's vote lacks %q: %q", when, want, voted)
			}
		}
	}
	check("after the vote")
	browsertest.Axe(t, tab, "the inbox with a row voted on")
	browsertest.Do(t, tab, chromedp.Reload())
	browsertest.Until(t, tab, `document.body.getAttribute("data-live") === "yes"`)
	browsertest.Do(t, tab, chromedp.Click(chromedp.CSS(row+" > summary")))
	check("after a reload")
	if !browsertest.Eval[bool](t, tab, `document.querySelector("`+row+` .voted-mark") !== null`) {
		t.Error("the folded row does not say alice voted")
	}
}

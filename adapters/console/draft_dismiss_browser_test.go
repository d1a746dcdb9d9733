package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/browsertest"
)

// TestDismissingADraftKeepsTheKeyboardInItsRow: Bob answers a question
// while Alice, at the keyboard, is writing her own answer to it in its
// inbox row. Her words are kept apart, unsent, with a button to dismiss
// them; she reaches it with Tab and presses Enter. The box goes, and the
// keyboard's focus stays on her row, not thrown back to the top of a
// long inbox. The row with the box passes axe.
func TestDismissingADraftKeepsTheKeyboardInItsRow(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(core.AskInput{Text: "Which zone should the cache go to?"})
	row := "#card-" + string(q.ID)
	tab := chrome(t)
	browsertest.Do(t, tab, chromedp.Navigate(e.srv.URL+"/"))
	signInTab(t, tab, opAlice)
	browsertest.Do(t, tab, chromedp.Click(chromedp.CSS(row+" > summary")), chromedp.SendKeys(chromedp.ID("text-"+string(q.ID)), "zone b"))
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceConsole, ID: opBob.name}, Text: "zone a"}); err != nil {
		t.Fatal(err)
	}
	browsertest.Until(t, tab, `document.querySelector("`+row+`[data-state=answered] .draft-box") !== null`)
	if box := browsertest.Eval[string](t, tab, `document.querySelector("`+row+` .draft-box").innerText`); !strings.Contains(box, "zone b") {
		t.Fatalf("the kept draft lacks what Alice wrote:\n%s", box)
	}
	browsertest.Axe(t, tab, "the inbox with a draft kept from a row closed meanwhile")
	for range 5 {
		if browsertest.Eval[bool](t, tab, `document.activeElement.classList.contains("draft-dismiss")`) {
			break
		}
		browsertest.Do(t, tab, chromedp.KeyEvent("\t"))
	}
	if !browsertest.Eval[bool](t, tab, `document.activeElement === document.querySelector("`+row+` .draft-dismiss")`) {
		t.Fatalf("Tab does not reach the button that dismisses the draft (the keyboard is on %s)", browsertest.Eval[string](t, tab, `document.activeElement.outerHTML.slice(0, 80)`))
	}
	browsertest.Do(t, tab, chromedp.KeyEvent("\r"))
	browsertest.Until(t, tab, `document.querySelector("`+row+` .draft-box") === null`)
	if !browsertest.Eval[bool](t, tab, `document.querySelector("`+row+`").contains(document.activeElement)`) {
		t.Errorf("dismissing the draft threw the keyboard's focus out of its row, to %s", browsertest.Eval[string](t, tab, `document.activeElement.tagName`))
	}
}

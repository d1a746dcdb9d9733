package console_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/adapters/console"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/browsertest"
)

// keptDrafts counts the drafts the tab keeps (kept.js).
const keptDrafts = `(function () {
  var n = 0;
  for (var i = 0; i < sessionStorage.length; i++) {
    if (sessionStorage.key(i).indexOf("askbridge:draft:") === 0) { n++; }
  }
  return n;
})()`

func valueOf(id string) string {
	return fmt.Sprintf(`document.getElementById(%q).value`, id)
}

// TestADraftOutlivesItsSession: a person writes an answer on a question's
// page, and an edit of an approval's arguments on an inbox row; each time
// the session idles out before they send it, the page reloads itself to
// the sign-in form, and once they sign in again what they wrote is back
// in its field (its inbox row unfolded), with a note saying where and
// that it was not sent. Sent and recorded, it is no longer kept. Another
// account signing in on the same tab never sees it.
func TestADraftOutlivesItsSession(t *testing.T) {
	e := newSimEnv(t, nil, func(o *console.Options) { o.Idle = time.Hour; o.MaxAge = 24 * time.Hour })
	clar := e.ask(core.AskInput{Text: "Which bucket holds the logs?"})
	appr := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Copy the logs?", Tool: "copy",
		Arguments: []byte(`{"dest":"s3://a"}`), Editable: &core.Editable{All: true}})
	tab := chrome(t)
	idleOut := func() {
		t.Helper()
		e.clock.Advance(2 * time.Hour)
		// The stream ends with the session, and the page reloads itself.
		browsertest.Until(t, tab, `document.getElementById("signin") !== null`)
	}

	// A question's page: the answer typed, not sent.
	text := "text-" + string(clar.ID)
	browsertest.Do(t, tab, chromedp.Navigate(e.srv.URL+"/q/"+string(clar.ID)))
	signInTab(t, tab, opAlice)
	browsertest.Do(t, tab, chromedp.SendKeys(chromedp.ID(text), "logs-eu, not logs-us"))
	idleOut()
	signInTab(t, tab, opAlice)
	browsertest.Until(t, tab, fmt.Sprintf(`location.pathname === %q`, "/q/"+string(clar.ID)))
	if got := browsertest.Eval[string](t, tab, valueOf(text)); got != "logs-eu, not logs-us" {
		t.Fatalf("after signing in again the answer reads %q: the draft was lost with the session", got)
	}
	if !browsertest.Eval[bool](t, tab, `document.querySelector("#card-`+string(clar.ID)+` .draft-restored") !== null`) {
		t.Error("no note says the draft was put back and not sent")
	}
	browsertest.Axe(t, tab, "a question's page with its draft put back")
	if status := browsertest.Submit(t, tab, "#card-"+string(clar.ID)+" form.answer button[type=submit]"); status != 200 {
		t.Fatalf("sending the answer: %d", status)
	}
	browsertest.Until(t, tab, `document.getElementById("recorded") !== null`)
	if got := e.get(clar.ID).Resolution; got == nil || got.Answer != "logs-eu, not logs-us" {
		t.Fatalf("recorded %+v", got)
	}
	if n := browsertest.Eval[int](t, tab, keptDrafts); n != 0 {
		t.Errorf("the tab still keeps %d drafts after the answer was recorded", n)
	}

	// An inbox row: an edit of the arguments, not sent.
	args := "args-" + string(appr.ID)
	row := "#card-" + string(appr.ID)
	browsertest.Do(t, tab, chromedp.Navigate(e.srv.URL+"/"))
	browsertest.Until(t, tab, `document.body.getAttribute("data-live") === "yes"`)
	browsertest.Do(t, tab, chromedp.Click(chromedp.CSS(row+" > summary")), chromedp.Click(chromedp.CSS(row+" details.edit > summary")))
	browsertest.Do(t, tab, chromedp.SendKeys(chromedp.ID(args), " (to bucket b)"))
	edited := browsertest.Eval[string](t, tab, valueOf(args))
	idleOut()
	signInTab(t, tab, opAlice)
	if got := browsertest.Eval[string](t, tab, valueOf(args)); got != edited {
		t.Fatalf("after signing in again the arguments read %q, want the edit %q", got, edited)
	}
	// The row unfolds; the editor's fold is left as it was, and named.
	if !browsertest.Eval[bool](t, tab, `document.querySelector("`+row+`").open`) {
		t.Error("the row is folded: the edit put back is out of sight")
	}
	if note := browsertest.Eval[string](t, tab, `document.querySelector("`+row+` .draft-restored").innerText`); !strings.Contains(note, "under \u201cEdit the arguments, then approve\u201d") {
		t.Errorf("the note does not say where the edit was put back: %q", note)
	}

	// Another account on the same tab: the draft is not theirs to see.
	idleOut()
	signInTab(t, tab, opBob)
	browsertest.Do(t, tab, chromedp.Click(chromedp.CSS(row+" > summary")))
	if got, prefill := browsertest.Eval[string](t, tab, valueOf(args)), browsertest.Eval[string](t, tab, `document.getElementById("`+args+`").defaultValue`); got != prefill {
		t.Errorf("bob, signed in on alice's tab, is shown her draft: %q", got)
	}
	if n := browsertest.Eval[int](t, tab, keptDrafts); n != 0 {
		t.Errorf("alice's draft is still kept in the tab bob signed in on (%d)", n)
	}

	// Answered in place on its row: no longer kept.
	inPlace := e.ask(core.AskInput{Text: "Which region?"})
	row = "#card-" + string(inPlace.ID)
	browsertest.Until(t, tab, `document.querySelector("`+row+`") !== null && document.body.getAttribute("data-live") === "yes"`)
	browsertest.Do(t, tab, chromedp.Click(chromedp.CSS(row+" > summary")), chromedp.SendKeys(chromedp.ID("text-"+string(inPlace.ID)), "eu-west-1"))
	if n := browsertest.Eval[int](t, tab, keptDrafts); n != 1 {
		t.Fatalf("the tab keeps %d drafts while bob writes one", n)
	}
	browsertest.Do(t, tab, chromedp.Click(chromedp.CSS(row+" form.answer button[type=submit]")))
	browsertest.Until(t, tab, `document.querySelector("`+row+` .recorded-box") !== null`)
	if n := browsertest.Eval[int](t, tab, keptDrafts); n != 0 {
		t.Errorf("the tab still keeps %d drafts after the answer was recorded in place", n)
	}

	// Closed by someone else while bob was away: his words are shown
	// apart, unsent, until he dismisses them.
	gone := e.ask(core.AskInput{Text: "Which zone?"})
	row = "#card-" + string(gone.ID)
	browsertest.Until(t, tab, `document.querySelector("`+row+`") !== null && document.body.getAttribute("data-live") === "yes"`)
	browsertest.Do(t, tab, chromedp.Click(chromedp.CSS(row+" > summary")), chromedp.SendKeys(chromedp.ID("text-"+string(gone.ID)), "zone b"))
	idleOut()
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: gone.ID, Decider: core.Decider{Surface: core.SurfaceConsole, ID: opAlice.name}, Text: "zone a"}); err != nil {
		t.Fatal(err)
	}
	signInTab(t, tab, opBob)
	browsertest.Do(t, tab, chromedp.Navigate(e.srv.URL+"/q/"+string(gone.ID)))
	browsertest.Until(t, tab, `document.querySelector("#card-`+string(gone.ID)+` .draft-box") !== null`)
	if box := browsertest.Eval[string](t, tab, `document.querySelector("#card-`+string(gone.ID)+` .draft-box").innerText`); !strings.Contains(box, "zone b") || !strings.Contains(box, "not sent") {
		t.Errorf("the closed question's page does not show bob's unsent words apart:\n%s", box)
	}
	browsertest.Axe(t, tab, "a closed question's page with an unsent draft")
	browsertest.Do(t, tab, chromedp.Click(chromedp.CSS(".draft-dismiss")))
	if n := browsertest.Eval[int](t, tab, keptDrafts); n != 0 {
		t.Errorf("a dismissed draft is still kept (%d)", n)
	}

	// Refused as a page (arguments that are no JSON): the refusal's page
	// puts the text back into its card to be put right, and the tab keeps
	// it no longer, the outcome being known.
	browsertest.Do(t, tab, chromedp.Navigate(e.srv.URL+"/q/"+string(appr.ID)))
	browsertest.Until(t, tab, `document.body.getAttribute("data-live") === "yes"`)
	browsertest.Do(t, tab, chromedp.Click(chromedp.CSS("#card-"+string(appr.ID)+" details.edit > summary")), chromedp.SendKeys(chromedp.ID(args), " (no JSON)"))
	typed := browsertest.Eval[string](t, tab, valueOf(args))
	if status := browsertest.Submit(t, tab, "#card-"+string(appr.ID)+" form.edit-form button.edit-approve"); status != 400 {
		t.Fatalf("arguments that are no JSON: %d", status)
	}
	browsertest.Until(t, tab, `document.getElementById("problem") !== null`)
	if got := browsertest.Eval[string](t, tab, valueOf(args)); got != typed {
		t.Errorf("the refusal's page lost what was typed: %q", got)
	}
	if n := browsertest.Eval[int](t, tab, keptDrafts); n != 0 {
		t.Errorf("the tab still keeps %d drafts after their refusal was shown", n)
	}

	// Signing out on purpose leaves nothing of the person's in the tab.
	browsertest.Do(t, tab, chromedp.Navigate(e.srv.URL+"/q/"+string(appr.ID)))
	browsertest.Until(t, tab, `document.body.getAttribute("data-live") === "yes"`)
	browsertest.Do(t, tab, chromedp.Click(chromedp.CSS("#card-"+string(appr.ID)+" details.edit > summary")), chromedp.SendKeys(chromedp.ID(args), " (to bucket c)"))
	if n := browsertest.Eval[int](t, tab, keptDrafts); n != 1 {
		t.Fatalf("the tab keeps %d drafts while bob edits the arguments", n)
	}
	if status := browsertest.Submit(t, tab, ".signout button"); status != 200 {
		t.Fatalf("sign out: %d", status)
	}
	if n := browsertest.Eval[int](t, tab, keptDrafts); n != 0 {
		t.Errorf("after signing out the tab still keeps %d drafts", n)
	}
}

package console_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/browsertest"
)

// noteSays is a condition: the inbox's page note is shown and places the
// page's open rows at from to to of the list.
func noteSays(from, to int) string {
	return fmt.Sprintf(`(function(){ var p = document.getElementById("page-note");
		return p !== null && !p.hidden && p.textContent.indexOf("Rows %d to %d") === 0; })()`, from, to)
}

// openCount is a condition: the inbox's heading counts n open.
func openCount(n int) string {
	return fmt.Sprintf(`document.getElementById("open-count").textContent === "%d"`, n)
}

// answerElsewhere answers q as someone on the API would, away from the
// page under test.
func (e *env) answerElsewhere(q *core.Question) {
	e.t.Helper()
	ops := core.Decider{Surface: core.SurfaceAPI, ID: "ops"}
	if _, err := e.svc.Answer(e.t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: ops, Text: "done"}); err != nil {
		e.t.Fatal(err)
	}
}

// TestThePageNoteFollowsTheRows: the inbox says which rows of the open
// list it shows, and keeps saying it truly while questions arrive and
// close with the page open. Before, the note was drawn once: an empty
// inbox that filled in place never said "Rows 1 to 1", and one that grew
// or emptied went on naming the rows it had when it was loaded.
func TestThePageNoteFollowsTheRows(t *testing.T) {
	e := newEnv(t, nil)
	tab := chrome(t)
	browsertest.Do(t, tab, chromedp.Navigate(e.srv.URL+"/"))
	signInTab(t, tab, opAlice)
	if !browsertest.Eval[bool](t, tab, `!document.getElementById("empty").hidden && !(document.getElementById("page-note") && !document.getElementById("page-note").hidden)`) {
		t.Fatal("an empty inbox shows a page note, or does not say it is empty")
	}

	first := e.ask(core.AskInput{Text: "Which bucket for the logs?"})
	browsertest.Until(t, tab, noteSays(1, 1)+` && document.getElementById("empty").hidden`)
	e.clock.Advance(time.Second)
	second := e.ask(core.AskInput{Text: "Which region for the replica?"})
	browsertest.Until(t, tab, noteSays(1, 2)+` && `+openCount(2))

	// A row answered elsewhere stays, to show its outcome, but it is no
	// longer one of the open list's rows.
	e.answerElsewhere(first)
	browsertest.Until(t, tab, `document.querySelector("#card-`+string(first.ID)+`[data-state=answered]") !== null`)
	browsertest.Until(t, tab, noteSays(1, 1)+` && `+openCount(1))
	e.answerElsewhere(second)
	browsertest.Until(t, tab, `document.querySelector("#card-`+string(second.ID)+`[data-state=answered]") !== null && `+openCount(0))
	if browsertest.Eval[bool](t, tab, `!document.getElementById("page-note").hidden`) {
		t.Fatalf("with no open row left, the page note says %q", browsertest.Eval[string](t, tab, `document.getElementById("page-note").textContent`))
	}
	browsertest.Axe(t, tab, "the inbox whose rows were all answered elsewhere")
}

// seedPages asks n reversible questions a second apart, so the inbox
// lists them in the order asked, and returns them in that order.
func (e *env) seedPages(n int) []*core.Question {
	e.t.Helper()
	var qs []*core.Question
	for i := range n {
		qs = append(qs, e.ask(core.AskInput{Text: fmt.Sprintf("Question %02d?", i)}))
		e.clock.Advance(time.Second)
	}
	return qs
}

// TestNewOnOtherPagesCountsOnlyTheOpen: someone reads the first page of
// a long inbox while new questions land on the next. The notice of new
// questions on other pages counts those still open: one answered
// elsewhere leaves it, and when none is left it goes. Before, it only
// ever grew, and sent people paging for questions already closed.
func TestNewOnOtherPagesCountsOnlyTheOpen(t *testing.T) {
	e := newEnv(t, nil)
	e.seedPages(51)
	tab := chrome(t)
	browsertest.Do(t, tab, chromedp.Navigate(e.srv.URL+"/"))
	signInTab(t, tab, opAlice)
	notice := `document.getElementById("elsewhere")`
	if !browsertest.Eval[bool](t, tab, notice+`.hidden && `+openCount(51)) {
		t.Fatal("the first page starts with a notice of new questions elsewhere, or without the total")
	}

	// The newest questions go last in the list: past this page's end.
	one := e.ask(core.AskInput{Text: "Asked after the page was drawn?"})
	e.clock.Advance(time.Second)
	two := e.ask(core.AskInput{Text: "Also asked after the page was drawn?"})
	browsertest.Until(t, tab, notice+`.textContent === "2 new questions are on other pages of the list." && !`+notice+`.hidden && `+openCount(53))
	if browsertest.Eval[bool](t, tab, `document.querySelector("#card-`+string(one.ID)+`:not(.stub), #card-`+string(two.ID)+`:not(.stub)") !== null`) {
		t.Fatal("a question past this page's end was drawn on it")
	}

	e.answerElsewhere(one)
	browsertest.Until(t, tab, openCount(52))
	browsertest.Until(t, tab, notice+`.textContent === "1 new question is on another page of the list." && !`+notice+`.hidden`)
	e.answerElsewhere(two)
	browsertest.Until(t, tab, openCount(51)+` && `+notice+`.hidden`)
}

// TestALaterPageKeepsItsPlace: someone reads the second page of the
// inbox while questions arrive and close, on it and on the first. The
// note says where the page's open rows now sit in the open list. Before,
// the page went on saying "Rows 51 to 52" whatever moved ahead of it or
// closed on it.
func TestALaterPageKeepsItsPlace(t *testing.T) {
	e := newEnv(t, nil)
	qs := e.seedPages(52)
	tab := chrome(t)
	browsertest.Do(t, tab, chromedp.Navigate(e.srv.URL+"/"))
	signInTab(t, tab, opAlice)
	if status := browsertest.Submit(t, tab, ".pager a[rel=next]"); status != http.StatusOK {
		t.Fatalf("the next page: %d", status)
	}
	browsertest.Until(t, tab, `document.body.getAttribute("data-live") === "yes" && document.querySelector("#card-`+string(qs[51].ID)+`") !== null`)
	browsertest.Until(t, tab, noteSays(51, 52))

	// Hard to reverse, it goes first in the list: on the first page,
	// ahead of this one.
	hard := e.ask(core.AskInput{Text: "Drop the old region?", Reversibility: core.HardToReverse})
	browsertest.Until(t, tab, `!document.getElementById("elsewhere").hidden && `+openCount(53))
	browsertest.Until(t, tab, noteSays(52, 53))
	e.answerElsewhere(hard)
	browsertest.Until(t, tab, openCount(52)+` && `+noteSays(51, 52))

	// One of the first page's rows, open when this page was drawn.
	e.answerElsewhere(qs[0])
	browsertest.Until(t, tab, openCount(51)+` && `+noteSays(50, 51))
	// One of this page's own: it stays, with its outcome.
	e.answerElsewhere(qs[51])
	browsertest.Until(t, tab, `document.querySelector("#card-`+string(qs[51].ID)+`[data-state=answered]") !== null && `+openCount(50))
	browsertest.Until(t, tab, noteSays(50, 50))
	// The newest question goes last in the list: on this, the last page.
	e.clock.Advance(time.Second)
	late := e.ask(core.AskInput{Text: "Asked while the second page was open?"})
	browsertest.Until(t, tab, `document.querySelector("#card-`+string(late.ID)+`[data-state=open]") !== null && `+openCount(51))
	browsertest.Until(t, tab, noteSays(50, 51)+` && document.getElementById("elsewhere").hidden`)
	browsertest.Axe(t, tab, "a later page of the inbox after questions moved ahead of it")
}

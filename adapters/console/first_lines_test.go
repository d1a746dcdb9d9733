package console_test

import (
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/askbridge/askbridge/core"
)

// longFirstLine is a question whose first line alone is far longer than
// a row has room for, with a second line after it.
var longFirstLine = strings.Repeat("Should the migration drop the column ", 100) + "now?\nMore context follows."

// shownAsTitle checks that link, a list's link text for a question asked
// as longFirstLine, is that question's first line cut as the inbox's
// folded rows cut it: the same start, ending in "…", and no longer than
// the folded row's own text for the same question.
func shownAsTitle(t *testing.T, where, link, row string) {
	t.Helper()
	if link != row {
		t.Errorf("%s shows %d characters (%q…), the inbox's row %d", where, utf8.RuneCountInString(link), link[:min(len(link), 60)], utf8.RuneCountInString(row))
	}
	if strings.Contains(link, "More context") || !strings.HasSuffix(link, "…") || !strings.HasPrefix(longFirstLine, strings.TrimSuffix(link, "…")) {
		t.Errorf("%s does not show the first line, cut: %q", where, link[:min(len(link), 200)])
	}
}

// rowText is the text of a question's folded inbox row.
func rowText(t *testing.T, b *browser, id core.QuestionID) string {
	t.Helper()
	m := regexp.MustCompile(`<span class="row-text">(.*?)</span>`).FindStringSubmatch(b.get("/rows/" + string(id)).body)
	if m == nil {
		t.Fatalf("no folded row text for %s", id)
	}
	return m[1]
}

// TestTheClosedListCutsATitleAsTheInboxDoes: the Closed list names each
// question by its first line, and drew that line whole: a first line of
// thousands of characters (a question may hold 4,000) stretched the
// table across many screens. It is cut as the inbox's rows cut it
// (firstLine), in one place for every list.
func TestTheClosedListCutsATitleAsTheInboxDoes(t *testing.T) {
	e := newEnv(t, nil)
	alice := e.signedIn(opAlice)
	q := e.ask(core.AskInput{Text: longFirstLine})
	row := rowText(t, alice, q.ID)
	if _, err := e.svc.Cancel(t.Context(), core.CancelInput{QuestionID: q.ID, By: core.Decider{Surface: core.SurfaceAPI, ID: "ops"}}); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<a href="/q/` + string(q.ID) + `">(.*?)</a>`).FindStringSubmatch(alice.get("/closed").body)
	if m == nil {
		t.Fatal("the Closed list does not link the question")
	}
	shownAsTitle(t, "the Closed list", m[1], row)
}

// TestWhileYouWereAwayShowsEachQuestionByItsFirstLine: the banner's list
// of questions closed while one was away linked each by its whole text,
// every line of it run together and without bound. It shows the first
// line, cut as elsewhere.
func TestWhileYouWereAwayShowsEachQuestionByItsFirstLine(t *testing.T) {
	e := newEnv(t, nil)
	e.signedIn(opAlice)
	e.clock.Advance(time.Hour)
	q := e.ask(core.AskInput{Text: longFirstLine})
	b := e.browser(e.srv)
	b.signIn(watcher.secret) // an observer has no banner to use up
	row := rowText(t, b, q.ID)
	if _, err := e.svc.Decline(t.Context(), q.ID, core.Decider{Surface: core.SurfaceAPI, ID: "ops-bot"}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	a := e.browser(e.srv)
	a.signIn(opAlice.secret)
	page := a.get("/").body
	m := regexp.MustCompile(`(?s)<aside class="away" id="away">.*?<a href="/q/` + string(q.ID) + `">(.*?)</a>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the banner does not link the question:\n%s", page[:min(len(page), 3000)])
	}
	shownAsTitle(t, "the banner", m[1], row)
}

// TestAQuestionsPageIsTitledByItsFirstLine: the question page's title
// (the browser's tab, its history and bookmarks, and the first thing a
// screen reader says of the page) was the question's whole text, every
// line of it, up to 4,000 characters. It is the first line, cut as every
// list cuts it.
func TestAQuestionsPageIsTitledByItsFirstLine(t *testing.T) {
	e := newEnv(t, nil)
	alice := e.signedIn(opAlice)
	q := e.ask(core.AskInput{Text: longFirstLine})
	m := regexp.MustCompile(`(?s)<title>(.*?) · askbridge console</title>`).FindStringSubmatch(alice.get("/q/" + string(q.ID)).body)
	if m == nil {
		t.Fatal("the question page has no title of its own")
	}
	shownAsTitle(t, "the question page's title", m[1], rowText(t, alice, q.ID))
}

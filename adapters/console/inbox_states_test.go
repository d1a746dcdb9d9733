package console_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// emptyNote is the inbox's note for a list with no rows.
var emptyNote = regexp.MustCompile(`(?s)<p id="empty"[^>]*>(.*?)</p>`)

// TestAnEmptyInboxSaysWhyItIsEmpty: an inbox whose filters match nothing
// says so, and leads to every open question, rather than "nothing is
// waiting on you" while questions wait outside the filters (a shared
// link's filters, left on). Unfiltered and empty, it says nothing waits.
func TestAnEmptyInboxSaysWhyItIsEmpty(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	if got := emptyNote.FindStringSubmatch(b.get("/").body); got == nil || !strings.Contains(got[1], "Nothing is waiting on you.") {
		t.Fatalf("the empty inbox says %q", got)
	}
	e.ask(core.AskInput{Text: "Which region?", Labels: core.Labels{Project: "billing"}})
	page := b.get("/?project=search").body
	got := emptyNote.FindStringSubmatch(page)
	if got == nil || strings.Contains(got[1], "waiting on you") || !strings.Contains(got[1], "No open question matches these filters") ||
		!strings.Contains(got[1], `<a href="/">`) {
		t.Fatalf("an inbox whose filters match nothing, with a question open, says %q", got)
	}
	// With rows, the note is there for the page to show once they go,
	// hidden until then.
	if got := emptyNote.FindString(b.get("/?project=billing").body); !strings.Contains(got, "hidden") || !strings.Contains(got, "No open question matches these filters") {
		t.Fatalf("a filtered inbox with rows has the note %q", got)
	}
}

// TestACardSaysHowLongIsLeft: a question's page says how long is left
// before its deadline, as the inbox row does, in words the page keeps
// current (data-rel="due"); a closed one has no deadline left to count.
func TestACardSaysHowLongIsLeft(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	q := e.ask(core.AskInput{Text: "Which region?", Timeout: 3 * time.Hour})
	page := b.get("/q/" + string(q.ID)).body
	deadline := regexp.MustCompile(`(?s)<dt>Deadline</dt><dd>(.*?)</dd>`).FindStringSubmatch(page)
	if deadline == nil || !strings.Contains(deadline[1], `data-rel="due">due in 3h</time>`) {
		t.Fatalf("the card's deadline reads %q", deadline)
	}
	if r := b.post("/q/"+string(q.ID)+"/decline", nil); r.status != 200 {
		t.Fatalf("decline: %d", r.status)
	}
	page = b.get("/q/" + string(q.ID)).body
	if strings.Contains(page, `data-rel="due"`) {
		t.Fatal("a closed question's card counts down to its deadline")
	}
}

// TestAClosedRowKeepsItsQuestion: a row that closes while the inbox shows
// it stays, with its outcome, and folded it still says which question it
// is. Before, a closed question's row folded to its kind and state with
// no question at all (its first line was worded for open rows alone), so
// whoever saw a row close under them could not tell which one had.
func TestAClosedRowKeepsItsQuestion(t *testing.T) {
	e := newEnv(t, nil)
	alice := e.signedIn(opAlice)
	q := e.ask(core.AskInput{Text: "Which region?\nThe rest of the question"})
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"}, Text: "eu"}); err != nil {
		t.Fatal(err)
	}
	row := alice.get("/rows/" + string(q.ID)).body
	if got := regexp.MustCompile(`<span class="row-text">(.*?)</span>`).FindStringSubmatch(row); got == nil || got[1] != "Which region?" {
		t.Errorf("the closed row folds to %q, want its first line", got)
	}
	if !strings.Contains(row, `data-state="answered"`) || !strings.Contains(row, "Answered by <bdi>ops</bdi> on ") {
		t.Errorf("the row is not the closed question's, with its outcome:\n%s", row)
	}
}

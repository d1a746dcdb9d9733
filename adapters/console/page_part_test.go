package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// TestQuestionPartCarriesItsOwnAddress: the page swaps the part it fetches
// in whole, so the part must be the element it replaces, re-fetch address
// and all; a part without it leaves the page deaf after its first change.
func TestQuestionPartCarriesItsOwnAddress(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(core.AskInput{Text: "Which region?"})
	b := e.signedIn(opAlice)
	wrapper := `<div id="page-` + string(q.ID) + `" data-qid="` + string(q.ID) + `" data-src="/q/` + string(q.ID) + `/part">`
	if page := b.get("/q/" + string(q.ID)); page.status != http.StatusOK || !strings.Contains(page.body, wrapper) {
		t.Fatalf("the page (%d) lacks %s", page.status, wrapper)
	}
	part := b.get("/q/" + string(q.ID) + "/part")
	if part.status != http.StatusOK || !strings.HasPrefix(strings.TrimSpace(part.body), wrapper) {
		t.Fatalf("the part (%d) does not start with %s:\n%.300s", part.status, wrapper, part.body)
	}
}

package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/browsertest"
)

// TestANewQuestionIsAnnounced: a screen reader's user keeps the inbox
// open. A question that arrives on their page is read out (a polite
// status region, there from the page's load, says what it is), as one
// that lands on another page of the list already was; before, a row
// appeared in silence and only the tab's title changed.
func TestANewQuestionIsAnnounced(t *testing.T) {
	e := newEnv(t, nil)
	e.ask(core.AskInput{Text: "Asked before the page was opened?"})
	tab := chrome(t)
	browsertest.Do(t, tab, chromedp.Navigate(e.srv.URL+"/"))
	signInTab(t, tab, opAlice)
	region := `document.querySelector("main [role=status]#arrived")`
	if !browsertest.Eval[bool](t, tab, region+` !== null && `+region+`.textContent.trim() === ""`) {
		t.Fatal("the inbox has no empty status region to announce arrivals in")
	}
	hard := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Fail over the primary database?\nThe replica is 2s behind.",
		Reversibility: core.HardToReverse, Tool: "failover", Arguments: []byte(`{"cluster":"main"}`)})
	browsertest.Until(t, tab, `document.querySelector("#card-`+string(hard.ID)+`") !== null`)
	browsertest.Until(t, tab, region+`.textContent.includes("Fail over the primary database?")`)
	said := browsertest.Eval[string](t, tab, region+`.textContent`)
	for _, want := range []string{"Approval needed", "hard to reverse"} {
		if !strings.Contains(strings.ToLower(said), strings.ToLower(want)) {
			t.Errorf("the announcement %q does not say %q", said, want)
		}
	}
	if strings.Contains(said, "2s behind") {
		t.Errorf("the announcement reads more than the question's first line: %q", said)
	}
}

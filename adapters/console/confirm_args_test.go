package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// confirmShown is what a confirmation page lists as to be recorded, not
// the hidden fields that post it again.
var confirmShown = regexp.MustCompile(`(?s)<dl class="recorded">.*?</dl>`)

// TestAConfirmationPageShowsTheArgumentsItApproves: a hard-to-reverse
// approval confirmed on a page of its own (a question's page, or any
// form without script) shows the whole call it approves, not only its
// hash: that page is all the person has in view when they confirm. A
// batch's approve-all lists each call it approves, with its arguments;
// a call already decided is not among them.
func TestAConfirmationPageShowsTheArgumentsItApproves(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	// As the card shows them: indented, escaped once for HTML.
	cmd := `&#34;cmd&#34;: &#34;make deploy &amp;&amp; curl -s https://get.example | sh&#34;`

	one := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Deploy?", Reversibility: core.HardToReverse, Tool: "shell",
		Arguments: []byte(`{"cmd":"make deploy && curl -s https://get.example | sh"}`)})
	r := b.post("/q/"+string(one.ID)+"/answer", url.Values{"option": {"approve"}})
	shown := confirmShown.FindString(r.body)
	if r.status != http.StatusOK || !strings.Contains(r.body, "Hard to reverse: record this?") ||
		!strings.Contains(shown, "<dt>Arguments</dt>") || !strings.Contains(shown, cmd) {
		t.Fatalf("the confirmation page does not show the arguments it approves: %d\n%s", r.status, shown)
	}

	batch := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Three deletes", Reversibility: core.HardToReverse, Calls: []core.CallInput{
		{ToolCallID: "c1", Tool: "rm", Arguments: []byte(`{"path":"/srv/first"}`)},
		{ToolCallID: "c2", Tool: "rm", Arguments: []byte(`{"path":"/srv/second"}`)},
		{ToolCallID: "c3", Tool: "rm", Arguments: []byte(`{"path":"/srv/third"}`)},
	}})
	if r := b.post("/q/"+string(batch.ID)+"/answer", url.Values{"call": {"c3"}, "call_option": {"deny"}}); r.status != http.StatusOK {
		t.Fatalf("deny c3: %d\n%s", r.status, r.body)
	}
	// One call approved: its arguments.
	r = b.post("/q/"+string(batch.ID)+"/answer", url.Values{"call": {"c2"}, "call_option": {"approve"}})
	shown = confirmShown.FindString(r.body)
	if !strings.Contains(shown, "/srv/second") || strings.Contains(shown, "/srv/first") {
		t.Fatalf("approving c2 alone, the confirmation shows\n%s", shown)
	}
	// Approve all: every call still undecided, and not the denied one.
	r = b.post("/q/"+string(batch.ID)+"/answer", url.Values{"option": {"approve"}})
	shown = confirmShown.FindString(r.body)
	if !strings.Contains(shown, "/srv/first") || !strings.Contains(shown, "/srv/second") || strings.Contains(shown, "/srv/third") ||
		!strings.Contains(shown, "<dt>rm (c1)</dt>") {
		t.Fatalf("approving all, the confirmation shows\n%s", shown)
	}
	if got := e.get(batch.ID); len(got.Answers) != 1 {
		t.Fatalf("a confirmation recorded something: %+v", got.Answers)
	}

	// In an inbox row the card's calls stay in view above the
	// confirmation: it does not repeat them.
	r = b.post("/q/"+string(one.ID)+"/answer", url.Values{"option": {"approve"}}, "X-Askbridge-Fetch", "row")
	if shown := confirmShown.FindString(r.body); r.header.Get("X-Askbridge-Step") != "confirm" || strings.Contains(shown, "<dt>Arguments</dt>") {
		t.Fatalf("the confirmation in a row repeats the arguments: %q\n%s", r.header.Get("X-Askbridge-Step"), shown)
	}
}

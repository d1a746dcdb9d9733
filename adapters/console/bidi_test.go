package console_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/console"
	"github.com/askbridge/askbridge/core"
)

// A person's words (an answer, a reason, their name) may hold bidi
// controls: core refuses them in an agent's text, not in a person's.
// Unisolated, U+202E in "eu-west-1\u202e" draws the server's "answered by
// ... at ..." after it backwards. So every such value is drawn in a <bdi>
// of its own, and the server's words after it outside it: on the card,
// on the row's "Recorded" lines (recordedOf), on the result page, and in
// a quorum's tally wherever it is shown. A name is cleaned of its
// controls as well (card.PersonName), and still drawn apart: a name in
// a right-to-left script would carry the numbers after it along.
func TestAPersonsWordsAreIsolatedFromTheServers(t *testing.T) {
	const rlo = "\u202e"
	mallory := testToken{"mallory" + rlo, "secret-mallory-0123456789", console.RoleOperator}
	routes := openRoutes()
	routes["pair"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceConsole: {"*"}}, Quorum: 2}
	e := newEnv(t, routes)
	e.tokens.set(opAlice, mallory)
	m := e.signedIn(mallory)
	alice := e.signedIn(opAlice)
	name, text := "<bdi>mallory</bdi>", "<bdi>eu-west-1"+rlo+"</bdi>"

	form := e.ask(core.AskInput{Kind: core.KindForm, Text: "Set up", Items: []core.FormItem{
		{ID: "region", Question: "Which region?", Options: []core.FormOption{{ID: "eu", Label: "eu"}, {ID: "us", Label: "us"}}},
		{ID: "size", Question: "Size?", Options: []core.FormOption{{ID: "s", Label: "s"}, {ID: "m", Label: "m"}}}}})
	answer := url.Values{"item": {"region"}, "item_text.region": {"eu-west-1" + rlo}}
	row := m.post("/q/"+string(form.ID)+"/answer", answer, "X-Askbridge-Fetch", "row")
	if row.status != http.StatusOK {
		t.Fatalf("the item's answer: %d", row.status)
	}
	recorded := text + ` <span class="by">(by ` + name + ` at `
	shown := text + ` <span class="by">answered by ` + name + ` at `
	if !strings.Contains(row.body, recorded) {
		t.Errorf("the row's recorded line does not hold the answer and its \"(by ...)\" apart, each isolated:\n%s", row.body)
	}
	for path, body := range map[string]string{"the answering row": row.body, "another's row": alice.get("/rows/" + string(form.ID)).body,
		"the question's page": alice.get("/q/" + string(form.ID)).body} {
		if !strings.Contains(body, shown) {
			t.Errorf("%s does not draw the item's answer and who gave it isolated:\n%s", path, body)
		}
	}

	batch := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Two writes?", Calls: []core.CallInput{
		{ToolCallID: "call_1", Tool: "write_file", Arguments: json.RawMessage(`{"path":"/a"}`)},
		{ToolCallID: "call_2", Tool: "chmod", Arguments: json.RawMessage(`{"path":"/b"}`)}}})
	// This reason first closes an isolate it never opened (U+2069), which
	// would close the <bdi>'s own from within: it is drawn without it.
	res := m.post("/q/"+string(batch.ID)+"/answer", url.Values{"call": {"call_1"}, "call_option": {"deny"}, "call_text": {"not now\u2069" + rlo}})
	if res.status != http.StatusOK {
		t.Fatalf("the call's denial: %d", res.status)
	}
	if want := `<bdi>Denied: not now` + rlo + `</bdi> <span class="by">(by ` + name + ` at `; !strings.Contains(res.body, want) {
		t.Errorf("the result page's line for the call does not hold the reason and its \"(by ...)\" apart:\n%s", res.body)
	}
	if want := `<bdi>Denied</bdi> <span class="by">by ` + name + ` via console at `; !strings.Contains(alice.get("/rows/"+string(batch.ID)).body, want) {
		t.Error("the call's outcome does not name who decided it isolated")
	}

	// A quorum's tally names its voters: each line is drawn apart.
	vote := e.ask(core.AskInput{Kind: core.KindApproval, Route: "pair", Text: "Restart?", Tool: "shell", Arguments: json.RawMessage(`{"cmd":"restart"}`)})
	r := m.post("/q/"+string(vote.ID)+"/answer", url.Values{"option": {core.ApproveOption}})
	if r.status != http.StatusOK {
		t.Fatalf("the vote: %d", r.status)
	}
	if want := "Recorded your vote (1 of 2 approvals: " + name + "). "; !strings.Contains(r.body, want) {
		t.Errorf("the result page's note of the vote does not isolate the voter's name (want %q):\n%s", want, r.body)
	}
	tally := "<bdi>1 of 2 approvals: mallory</bdi>"
	for path, body := range map[string]string{"the row": alice.get("/rows/" + string(vote.ID)).body,
		"the question's page": alice.get("/q/" + string(vote.ID)).body, "/people": alice.get("/people").body} {
		if !strings.Contains(body, tally) {
			t.Errorf("%s does not isolate the tally that names the voter:\n%s", path, body)
		}
	}
}

// The server's own lines that name a person (the outcome line "Answered
// by ... on ... via console", the refusal told to whoever came second,
// the recorded "By" line and the history's "Who or what closed it")
// draw the name in a <bdi> of its own, so that nothing in it can reorder
// the words after it; the name itself is cleaned of U+202E
// (card.PersonName), as the agent reads it. Before, only the lines whose
// name stands apart in the template were isolated: these ran the name
// and the server's words together.
func TestANameInTheServersLinesIsIsolated(t *testing.T) {
	const rlo = "\u202e"
	mallory := testToken{"mallory" + rlo, "secret-mallory-0123456789", console.RoleOperator}
	e := newEnv(t, nil)
	e.tokens.set(opAlice, mallory)
	m := e.signedIn(mallory)
	alice := e.signedIn(opAlice)
	name := "<bdi>mallory</bdi>"

	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	res := m.post("/q/"+string(q.ID)+"/answer", url.Values{"text": {"eu"}})
	if res.status != http.StatusOK {
		t.Fatalf("the answer: %d", res.status)
	}
	outcome := "Answered by " + name + " on "
	for what, want := range map[string]string{"the recorded By line": "<dd>" + name + " via console</dd>", "the card's outcome line": outcome} {
		if !strings.Contains(res.body, want) {
			t.Errorf("the result page's %s does not isolate the name (want %q):\n%s", what, want, res.body)
		}
	}
	late := alice.post("/q/"+string(q.ID)+"/answer", url.Values{"text": {"us"}}, "X-Askbridge-Fetch", "row")
	if late.status != http.StatusConflict || !strings.Contains(late.body, "Already closed. "+outcome) {
		t.Errorf("the refusal told to the second: %d, does not isolate the name:\n%s", late.status, late.body)
	}
	if body := alice.get("/closed").body; !strings.Contains(body, outcome) {
		t.Errorf("the history's line does not isolate the name:\n%s", body)
	}
}

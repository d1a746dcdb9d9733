package actionlink_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestNtfyPageNamesNoTopic: an ntfy link's page, its menu and what a POST
// of it says never print the topic the link was sent to: the topic works
// as a password (whoever knows it reads and answers every question sent
// there), and the token is sealed so that its URL does not give it away.
// Before, the confirm form said "answering as <topic>" to anyone who
// opened the URL: a forwarded link, a shared screenshot, a link preview.
func TestNtfyPageNamesNoTopic(t *testing.T) {
	b := newBridge(t)
	q := b.ask(approval())
	const topic = aliceTopic
	shown := card.New(q, core.MessageRef{Surface: core.SurfaceNtfy, Room: topic, Kind: core.DeliverPost})
	links, err := b.s.Links(q, shown, core.SurfaceNtfy, topic, b.srv.URL+"/ntfy/act/")
	if err != nil {
		t.Fatal(err)
	}
	menu, err := b.s.MenuLink(q, shown, core.SurfaceNtfy, topic, b.srv.URL+"/ntfy/act/")
	if err != nil {
		t.Fatal(err)
	}
	status, body := call(t, http.MethodGet, links[0].URL, nil)
	if status != http.StatusOK || !strings.Contains(body, "Confirm: Approve") || strings.Contains(body, topic) {
		t.Fatalf("the link's page: %d\n%s", status, body)
	}
	if !strings.Contains(body, core.RecipientLabel(core.SurfaceNtfy)) {
		t.Errorf("the page does not say who the answer is recorded as:\n%s", body)
	}
	if status, body := call(t, http.MethodGet, menu, nil); status != http.StatusOK || strings.Contains(body, topic) {
		t.Fatalf("the menu: %d\n%s", status, body)
	}
	// A topic that is not one of the route's deciders: refused on
	// opening and on confirming, still unnamed.
	const other = "s3cret-topic-of-bob"
	refused, err := b.s.Links(q, shown, core.SurfaceNtfy, other, b.srv.URL+"/ntfy/act/")
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		if status, body := call(t, method, refused[0].URL, nil); status != http.StatusForbidden || strings.Contains(body, other) {
			t.Fatalf("%s by another topic: %d\n%s", method, status, body)
		}
	}
	// The topic's own answer is recorded, and its page names no topic either.
	if status, body := call(t, http.MethodPost, links[0].URL, nil); status != http.StatusOK || strings.Contains(body, topic) {
		t.Fatalf("the POST: %d\n%s", status, body)
	}
}

func formAsk() core.AskInput {
	return core.AskInput{Kind: core.KindForm, Text: "Set up the service", Items: []core.FormItem{
		{ID: "db", Question: "Which database?", Options: []core.FormOption{{ID: "pg", Label: "Postgres"}, {ID: "my", Label: "MySQL"}}},
		{ID: "env", Question: "Which environment?", Options: []core.FormOption{{ID: "st", Label: "Staging"}, {ID: "pr", Label: "Prod"}}},
	}}
}

// TestAnsweredItemSaysWhoAnsweredIt: a form item's link used again once
// its item has an answer (a double tap, a second recipient) is told who
// answered the item and when, as a chat click on an old card is
// (card.PartDoneNote), and the POST shows how the form stands. Before,
// it said only "This choice is no longer offered", so the person who had
// just answered it was not told their answer counted (laws 2 and 12).
func TestAnsweredItemSaysWhoAnsweredIt(t *testing.T) {
	b := newBridge(t)
	q := b.ask(formAsk())
	u := b.link(q, alice, "1. Postgres")
	if status, body := call(t, http.MethodPost, u, url.Values{"address": {alice}}); status != http.StatusOK {
		t.Fatalf("first POST: %d\n%s", status, body)
	}
	const want = "Item 1 was already answered by an email recipient at 2026-06-01 09:00 UTC. Nothing was recorded."
	status, body := call(t, http.MethodPost, u, url.Values{"address": {alice}})
	if status != http.StatusConflict || !strings.Contains(body, want) || !strings.Contains(body, "Which database?: Postgres") {
		t.Fatalf("the second POST: %d\n%s", status, body)
	}
	if status, body := call(t, http.MethodGet, b.link(q, alice, "1. MySQL"), nil); status != http.StatusOK || !strings.Contains(body, want) {
		t.Fatalf("a GET of another option of the item: %d\n%s", status, body)
	}
	if n := len(b.state(q.ID).Answers); n != 1 {
		t.Fatalf("%d items answered, want 1", n)
	}
}

// TestDoubleTapSaysTheFirstCounted: a confirm sent twice (a double tap;
// the browser shows the second response only) is told that the
// question was closed by its own earlier answer, which stands, in the
// words every surface uses (card.RefusalNote of an Own ClosedError). Before, it read "Your answer was not recorded" under an
// anonymous "Answered by an email recipient", and the person whose answer
// had closed the question believed it lost. Someone else's close is still
// told as a loss.
func TestDoubleTapSaysTheFirstCounted(t *testing.T) {
	b := newBridge(t)
	q := b.ask(approval())
	u := b.link(q, alice, card.LabelApprove)
	if status, body := call(t, http.MethodPost, u, url.Values{"address": {alice}}); status != http.StatusOK {
		t.Fatalf("first POST: %d\n%s", status, body)
	}
	status, body := call(t, http.MethodPost, u, url.Values{"address": {alice}})
	if status != http.StatusConflict || !strings.Contains(body, "Already closed by your earlier answer") ||
		strings.Contains(body, "not recorded.") || !strings.Contains(body, "Verdict: Approved") {
		t.Fatalf("the second POST: %d\n%s", status, body)
	}

	q2 := b.ask(approval())
	if _, err := b.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q2.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "bob"},
		OptionID: core.ApproveOption}); err != nil {
		t.Fatal(err)
	}
	status, body = call(t, http.MethodPost, b.link(q2, alice, card.LabelApprove), url.Values{"address": {alice}})
	if status != http.StatusConflict || !strings.Contains(body, "Your answer was not recorded") || strings.Contains(body, "your earlier answer") {
		t.Fatalf("a POST after someone else answered: %d\n%s", status, body)
	}
}

// validEmail is the HTML standard's "valid email address" (its own
// regular expression, https://html.spec.whatwg.org/#valid-e-mail-address):
// what a browser's <input type=email> lets a form submit. Its local part
// is ASCII alone.
var validEmail = regexp.MustCompile("^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$")

var addressInput = regexp.MustCompile(`<input[^>]*name="address"[^>]*>`)

// TestAddressFieldTakesAnInternationalAddress: the field where the
// recipient types the address a link was sent to lets a browser submit
// an address with non-ASCII letters, which a route may name
// (net/mail takes them). Before, it was <input type=email>, whose
// constraint validation refuses a local part outside ASCII: émile could
// not confirm at all, whatever they typed.
func TestAddressFieldTakesAnInternationalAddress(t *testing.T) {
	b := newBridge(t)
	q := b.ask(approval())
	_, body := call(t, http.MethodGet, b.link(q, emile, card.LabelApprove), nil)
	tag := addressInput.FindString(body)
	if tag == "" {
		t.Fatalf("no address field:\n%s", body)
	}
	if strings.Contains(tag, `type="email"`) && !validEmail.MatchString(emile) {
		t.Fatalf("a browser refuses %s in %s", emile, tag)
	}
	// Typed as a person types it: past the address check, and recorded.
	status, body := call(t, http.MethodPost, b.link(q, emile, card.LabelApprove), url.Values{"address": {" Émile@example.fr"}})
	if status != http.StatusOK || !strings.Contains(body, "Recorded") {
		t.Fatalf("the POST: %d\n%s", status, body)
	}
}

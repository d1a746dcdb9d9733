package actionlink_test

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
)

// note is the page's one sentence that matters (its role="status" line).
var note = regexp.MustCompile(`role="status">([^<]*)</p>`)

func noteOf(t *testing.T, body string) string {
	t.Helper()
	m := note.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no note on the page:\n%s", body)
	}
	return m[1]
}

// TestOpeningALinkSaysAtOnceWhoMayNotAnswer: carol is mailed the
// question but may not decide it. Opening her link says so at once, in
// the words the POST refuses her with, with no form to confirm and
// nothing recorded; before, the GET showed the confirm form and she
// learned only after confirming. Her ntfy menu link lists no choices
// either.
func TestOpeningALinkSaysAtOnceWhoMayNotAnswer(t *testing.T) {
	b := newBridge(t)
	q := b.ask(approval())
	u := b.link(q, carol, card.LabelApprove)
	before := coretest.Kinds(coretest.EventsOf(t, b.svc, q.ID))

	status, got := call(t, http.MethodGet, u, nil)
	if status != http.StatusForbidden || strings.Contains(got, "<form") || !strings.Contains(got, "Drop the staging table?") {
		t.Fatalf("carol's GET: %d\n%s", status, got)
	}
	if after := coretest.Kinds(coretest.EventsOf(t, b.svc, q.ID)); !slices.Equal(before, after) {
		t.Fatalf("a GET changed the events: %v, then %v", before, after)
	}
	status, posted := call(t, http.MethodPost, u, url.Values{"address": {carol}})
	if status != http.StatusForbidden {
		t.Fatalf("carol's POST: %d\n%s", status, posted)
	}
	if g, p := noteOf(t, got), noteOf(t, posted); g != p || !strings.Contains(g, "not one of the people who may answer") {
		t.Fatalf("the GET says %q, the POST %q", g, p)
	}

	view := card.New(q, core.MessageRef{Surface: core.SurfaceNtfy, Room: "carol-topic", Kind: core.DeliverPost})
	menu, err := b.s.MenuLink(q, view, core.SurfaceNtfy, "carol-topic", b.srv.URL+"/ntfy/act/")
	if err != nil {
		t.Fatal(err)
	}
	status, body := call(t, http.MethodGet, menu, nil)
	if status != http.StatusForbidden || strings.Contains(body, "<a href") || noteOf(t, body) != noteOf(t, posted) {
		t.Fatalf("carol's menu: %d\n%s", status, body)
	}

	// Alice, who may decide, is still offered the form.
	if status, body := call(t, http.MethodGet, b.link(q, alice, card.LabelApprove), nil); status != http.StatusOK || !strings.Contains(body, "<form") {
		t.Fatalf("alice's GET: %d\n%s", status, body)
	}
	if !b.state(q.ID).Open() {
		t.Fatal("a refused link closed the question")
	}
}

// TestOpeningALinkOfAClosedQuestionSaysHowItEnded: a link opened after
// its question was answered elsewhere, or expired with its run, says so
// at once, with no form.
func TestOpeningALinkOfAClosedQuestionSaysHowItEnded(t *testing.T) {
	b := newBridge(t)
	answered := b.ask(approval())
	in, err := core.AnswerFor(answered, core.Ref{QuestionID: answered.ID, Item: -1, Action: core.RefDeny},
		core.Decider{Surface: core.SurfaceAPI, ID: "bob"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.Answer(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	expiring := approval()
	expiring.Text = "Rotate the keys?"
	ended := b.ask(expiring)
	if _, err := b.svc.EndRun(t.Context(), core.Run{Agent: ended.Agent, ID: ended.RunID}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q    *core.Question
		to   string
		want string
	}{
		{answered, alice, "Denied"}, {answered, carol, "Denied"},
		{ended, alice, "xpired"}, {ended, carol, "xpired"},
	} {
		status, body := call(t, http.MethodGet, b.link(c.q, c.to, card.LabelApprove), nil)
		if status != http.StatusOK || strings.Contains(body, "<form") || !strings.Contains(body, "This question is closed") ||
			!strings.Contains(body, c.want) {
			t.Errorf("%s's link to %s question: %d\n%s", c.to, b.state(c.q.ID).State, status, body)
		}
	}
}

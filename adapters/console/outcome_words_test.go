package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// TestARefusalReadsAsOneSentence: core's refusal of a second vote ends
// with its own full stop; the console's "Nothing was recorded." follows
// it as a sentence of its own, not after a doubled stop.
func TestARefusalReadsAsOneSentence(t *testing.T) {
	e := newEnv(t, pairRoutes())
	alice := e.signedIn(opAlice)
	q := e.ask(core.AskInput{Kind: core.KindApproval, Route: "pair", Text: "Drop?", Tool: "sql", Arguments: []byte(`{}`)})
	if r := alice.post("/q/"+string(q.ID)+"/answer", url.Values{"option": {core.ApproveOption}}); r.status != http.StatusOK {
		t.Fatalf("the vote: %d", r.status)
	}
	// A tab drawn before the vote posts it again, in place and as a page.
	for _, header := range [][]string{{"X-Askbridge-Fetch", "row"}, nil} {
		r := alice.post("/q/"+string(q.ID)+"/answer", url.Values{"option": {core.ApproveOption}}, header...)
		problem := regexp.MustCompile(`(?s)<p class="problem-line[^>]*>.*?</p>`).FindString(r.body)
		if want := core.AlreadyCountedMessage + " Nothing was recorded."; r.status != http.StatusConflict || !strings.Contains(problem, want) {
			t.Errorf("second vote (%v): %d %s, want %q", header, r.status, problem, want)
		}
	}
}

// TestAWithdrawalSaysWhyOnce: an agent's reason for withdrawing is in
// core's outcome line ("Withdrawn by the agent ...: why"), so the card
// does not say it again as a reason; nor does it repeat, as a reason, the
// server's own default words for a withdrawal given none. An operator's
// reason, which the outcome line leaves out, is shown.
func TestAWithdrawalSaysWhyOnce(t *testing.T) {
	e := newEnv(t, nil)
	alice := e.signedIn(opAlice)
	outcome := regexp.MustCompile(`(?s)<div class="outcome".*?</div>`)
	agent := core.Decider{Surface: core.SurfaceAgent, ID: "agent-a"}
	for _, c := range []struct {
		by           core.Decider
		reason, want string
		shown        bool
	}{
		{agent, "answered at the host", "Withdrawn by the agent on 2026-11-30 09:00 UTC, saying “answered at the host”", false},
		{agent, "", "Withdrawn by the agent on 2026-11-30 09:00 UTC", false},
		{core.Decider{Surface: core.SurfaceConsole, ID: opBob.name, Name: opBob.name}, "", "Withdrawn by an operator", false},
		{core.Decider{Surface: core.SurfaceConsole, ID: opBob.name, Name: opBob.name}, "wrong repo", "Withdrawn by an operator", true},
	} {
		q := e.ask(core.AskInput{Text: "Which branch?"})
		if _, err := e.svc.Cancel(t.Context(), core.CancelInput{QuestionID: q.ID, By: c.by, Reason: c.reason}); err != nil {
			t.Fatal(err)
		}
		for path, body := range map[string]string{"page": alice.get("/q/" + string(q.ID)).body, "row": alice.get("/rows/" + string(q.ID)).body} {
			box := outcome.FindString(body)
			if !strings.Contains(box, c.want) {
				t.Errorf("%s withdrawn by %s (%q): the outcome lacks %q:\n%s", path, c.by.Surface, c.reason, c.want, box)
			}
			if got := strings.Contains(box, "outcome-reason"); got != c.shown {
				t.Errorf("%s withdrawn by %s (%q): a separate reason shown %v, want %v:\n%s", path, c.by.Surface, c.reason, got, c.shown, box)
			}
		}
	}
}

// TestAPartAnsweredFirstSaysByWhom: alice sends a form's answers from a
// page drawn before Bob answered one of its items through the API, and a
// batch's call that he decided. Nothing of hers is recorded, and she is
// told who answered that part and when, in every surface's words
// (card.PartDoneNote), in place and as a page; before, the form's
// refusal named the item's id and a bare time, and not who.
func TestAPartAnsweredFirstSaysByWhom(t *testing.T) {
	e := newEnv(t, nil)
	alice := e.signedIn(opAlice)
	bob := core.Decider{Surface: core.SurfaceAPI, ID: "bob-api", Name: "Bob"}
	form := e.ask(core.AskInput{Kind: core.KindForm, Text: "Set up staging", Items: []core.FormItem{
		{ID: "size", Question: "Node size?", Options: []core.FormOption{{ID: "s", Label: "small"}, {ID: "m", Label: "medium"}}},
		{ID: "region", Question: "Which region?", Options: []core.FormOption{{ID: "eu", Label: "eu-west-1"}, {ID: "us", Label: "us-east-1"}}},
	}})
	batch := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Two writes?", Calls: []core.CallInput{
		{ToolCallID: "toolu_1", Tool: "write_file", Arguments: []byte(`{"path":"/a"}`)},
		{ToolCallID: "toolu_2", Tool: "chmod", Arguments: []byte(`{"path":"/b"}`)},
	}})
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: form.ID, Decider: bob, Items: []core.ItemInput{{ItemID: "region", OptionID: "us"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: batch.ID, Decider: bob, Calls: []core.CallDecision{{ToolCallID: "toolu_2", OptionID: core.ApproveOption}}}); err != nil {
		t.Fatal(err)
	}
	problem := regexp.MustCompile(`(?s)<p class="problem-line[^>]*>(.*?)</p>`)
	for _, c := range []struct {
		what string
		q    *core.Question
		form url.Values
		want string
	}{
		{"a form's items", form, url.Values{"item_option.size": {"m"}, "item_option.region": {"eu"}},
			"Item 2 was already answered by <bdi>Bob</bdi> at 2026-11-30 09:00 UTC. Nothing was recorded."},
		{"a batch's call", batch, url.Values{"call": {"toolu_2"}, "call_option": {core.DenyOption}},
			"Call 2 was already decided by <bdi>Bob</bdi> at 2026-11-30 09:00 UTC. Nothing was recorded."},
	} {
		for _, header := range [][]string{{"X-Askbridge-Fetch", "row"}, nil} {
			r := alice.post("/q/"+string(c.q.ID)+"/answer", c.form, header...)
			m := problem.FindStringSubmatch(r.body)
			if r.status != http.StatusConflict || m == nil || m[1] != c.want {
				t.Errorf("%s (%v): %d, the refusal reads %q, want %q", c.what, header, r.status, m, c.want)
			}
		}
	}
	if got := e.get(form.ID); len(got.Answers) != 1 {
		t.Errorf("the form holds %d answers, want Bob's alone", len(got.Answers))
	}
}

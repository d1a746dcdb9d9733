package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// votedBox is the block a card shows its viewer once they have voted.
var votedBox = regexp.MustCompile(`(?s)<div class="voted".*?</div>`)

// TestAVoterIsNotOfferedTheVoteAgain: on a question that needs two
// people, once a person's vote is in, the question's page, its inbox row
// and its result page show that person what they voted, how many votes
// are in and how many are needed, and offer no vote buttons (core would
// refuse a second vote as already counted). Someone who has not voted
// still gets them. A vote cast through the API with the same token is
// the same person's vote (core.VoteKey), and reads so on the console.
func TestAVoterIsNotOfferedTheVoteAgain(t *testing.T) {
	e := newEnv(t, pairRoutes(core.SurfaceAPI))
	alice, bob := e.signedIn(opAlice), e.signedIn(opBob)

	appr := e.ask(core.AskInput{Kind: core.KindApproval, Route: "pair", Text: "Restart the primary?", Tool: "shell", Arguments: []byte(`{"cmd":"restart"}`)})
	res := alice.post("/q/"+string(appr.ID)+"/answer", url.Values{"option": {core.ApproveOption}, "text": {"looks safe"}})
	if res.status != http.StatusOK || !e.get(appr.ID).Open() {
		t.Fatalf("alice's vote: %d", res.status)
	}
	approveButton := `name="option" value="approve"`
	for path, body := range map[string]string{
		"the result page":     res.body,
		"the question's page": alice.get("/q/" + string(appr.ID)).body,
		"the inbox row":       alice.get("/rows/" + string(appr.ID)).body,
		"the inbox":           alice.get("/").body,
	} {
		if strings.Contains(body, approveButton) {
			t.Errorf("%s offers alice the vote buttons again after her vote", path)
		}
		box := votedBox.FindString(body)
		for _, want := range []string{"You voted", "approve", "<bdi>looks safe</bdi>", "1 vote is in", "2 people must agree"} {
			if !strings.Contains(box, want) {
				t.Errorf("%s: what alice voted lacks %q:\n%s", path, want, box)
			}
		}
	}
	if row := alice.get("/").body; !strings.Contains(row, `<span class="tally voted-mark">you voted</span>`) {
		t.Error("alice's folded inbox row does not say she voted")
	}
	for path, body := range map[string]string{"the question's page": bob.get("/q/" + string(appr.ID)).body, "the inbox row": bob.get("/rows/" + string(appr.ID)).body} {
		if !strings.Contains(body, approveButton) || votedBox.MatchString(body) {
			t.Errorf("%s: bob, who has not voted, is not offered the vote", path)
		}
	}

	// A decision, voted from the API with alice's token: the console
	// signed in with that token is the same voter.
	dec := e.ask(core.AskInput{Kind: core.KindDecision, Route: "pair", Text: "Queue?", Options: []core.Option{
		{ID: "kafka", Title: "Kafka", Writeup: "durable", Recommended: true}, {ID: "sqs", Title: "SQS", Writeup: "managed"},
	}})
	if status := aliceOnTheAPI(t, e)(dec.ID, `{"chosen_option_id":"sqs"}`); status != http.StatusOK {
		t.Fatalf("alice's API vote: %d", status)
	}
	page := alice.get("/q/" + string(dec.ID)).body
	if strings.Contains(page, `name="option" value="kafka"`) {
		t.Error("the console offers alice a vote she cast through the API")
	}
	if box := votedBox.FindString(page); !strings.Contains(box, "SQS") || !strings.Contains(box, "via api") {
		t.Errorf("the page does not say alice voted SQS through the API:\n%s", box)
	}
	if !strings.Contains(bob.get("/q/"+string(dec.ID)).body, `name="option" value="kafka"`) {
		t.Error("bob is not offered the decision's options")
	}
}

// TestNoConfirmationForWhatCoreWillRefuse: a hard-to-reverse choice is
// shown back to confirm before it is recorded, but only to someone whose
// choice would be recorded. A second vote, or a choice by someone the
// route does not list (a stale page, a form posted again), is refused at
// once, in core's words, as the API and chat refuse it: not first
// confirmed, and then refused.
func TestNoConfirmationForWhatCoreWillRefuse(t *testing.T) {
	routes := pairRoutes()
	routes["solo"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceConsole: {opAlice.name}}}
	e := newEnv(t, routes)
	alice, bob := e.signedIn(opAlice), e.signedIn(opBob)
	ask := func(route string) *core.Question {
		return e.ask(core.AskInput{Kind: core.KindApproval, Route: route, Text: "Drop the table?", Tool: "sql",
			Arguments: []byte(`{"q":"drop table x"}`), Reversibility: core.HardToReverse})
	}
	// approve is a fresh form each time: post adds the browser's token.
	approve := func() url.Values { return url.Values{"option": {core.ApproveOption}} }

	voted := ask("pair")
	if r := alice.post("/q/"+string(voted.ID)+"/answer", url.Values{"option": {core.ApproveOption}, "confirm": {"yes"}}); r.status != http.StatusOK {
		t.Fatalf("alice's vote: %d", r.status)
	}
	r := alice.post("/q/"+string(voted.ID)+"/answer", approve())
	if r.status != http.StatusConflict || strings.Contains(r.body, "record this?") || !strings.Contains(r.body, core.AlreadyCountedMessage) {
		t.Errorf("a second vote on a hard-to-reverse question: %d, want 409 with core's refusal and no confirmation:\n%s", r.status, r.body)
	}

	solo := ask("solo")
	r = bob.post("/q/"+string(solo.ID)+"/answer", approve())
	if r.status != http.StatusForbidden || strings.Contains(r.body, "record this?") {
		t.Errorf("bob, whom the route does not list: %d, want 403 and no confirmation:\n%s", r.status, r.body)
	}
	evs, err := e.svc.QuestionEvents(t.Context(), solo.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	if last := evs[len(evs)-1]; last.Kind != core.EventRefused {
		t.Errorf("bob's refused answer was not recorded as a refusal, as core records it on every door: the last event is %s", last.Kind)
	}
	// Whoever may answer is still asked to confirm.
	if r := alice.post("/q/"+string(solo.ID)+"/answer", approve()); r.status != http.StatusOK || !strings.Contains(r.body, "record this?") {
		t.Errorf("alice's approval was not shown back to confirm: %d", r.status)
	}
}

// TestAPersonsVoteFromChatCountsOnTheConsole: a person is one voter on
// every surface. Alice votes from Slack; the console, signed in with her
// token (an account of hers), shows her vote and offers no buttons.
func TestAPersonsVoteFromChatCountsOnTheConsole(t *testing.T) {
	e := newEnv(t, nil)
	withPeople(t, e, peopleRoutes())
	alice, bob := e.signedIn(opAlice), e.signedIn(opBob)
	q := e.ask(core.AskInput{Kind: core.KindApproval, Route: "infra", Text: "Restart the primary?", Tool: "shell", Arguments: []byte(`{"cmd":"restart"}`)})
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, OptionID: core.ApproveOption, Text: "fine by me",
		Decider: core.Decider{Surface: core.SurfaceSlack, ID: "U-alice"}}); err != nil || !e.get(q.ID).Open() {
		t.Fatalf("alice's vote from Slack: %v", err)
	}
	page := alice.get("/q/" + string(q.ID)).body
	if strings.Contains(page, `value="approve"`) {
		t.Error("the console offers alice a vote she cast from Slack")
	}
	if box := votedBox.FindString(page); !strings.Contains(box, "to approve") || !strings.Contains(box, "via slack") || !strings.Contains(box, "fine by me") {
		t.Errorf("the page does not say alice voted to approve from Slack:\n%s", box)
	}
	if !strings.Contains(bob.get("/q/"+string(q.ID)).body, `value="approve"`) {
		t.Error("bob, who has not voted, is not offered the vote")
	}
}

package discord

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/core"
)

// TestGatewayCallbackLeavesNoBucket: answering a click over the gateway
// leaves nothing behind in the session's rate limiter. discordgo keeps a
// bucket for every URL it has called, for the life of the session, and
// an interaction's callback URL is its own (its id and its token): each
// click left a bucket, the token in its key, for as long as the process
// ran, a store that grew with every click and was never pruned. The
// bucket for the callback's URL, asked for after the click, must be one
// the limiter makes afresh (one request left), not the one the callback
// spent (none left: the fake sends no rate-limit headers).
func TestGatewayCallbackLeavesNoBucket(t *testing.T) {
	r := newRig(t, rigOptions{gateway: true})
	if !r.fake.WaitFor(10*time.Second, func() bool { return r.fake.Connected() == 1 }) {
		t.Fatal("the adapter never connected to the gateway")
	}
	q := r.ask(decisionInput())
	card := r.card(q.ID, nil)
	var urls []string
	for _, c := range []struct {
		who    discordfake.User
		option int
	}{{mallory, 0}, {alice, 1}} { // refused, then recorded
		click := r.fake.Click(c.who, card.ID, r.button(card, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: c.option}).CustomID)
		if err := r.fake.Dispatch(click); err != nil {
			t.Fatal(err)
		}
		if !r.fake.WaitFor(10*time.Second, func() bool { return len(r.fake.Responses(click.ID)) == 1 }) {
			t.Fatalf("%s's click was never answered", c.who.Name)
		}
		var i discordgo.Interaction
		if err := i.UnmarshalJSON(click.Body); err != nil {
			t.Fatal(err)
		}
		urls = append(urls, discordgo.EndpointInteractionResponse(i.ID, i.Token))
	}
	if got := r.question(q.ID); got.State != core.StateAnswered || got.Resolution.OptionID != "ddb" {
		t.Fatalf("after the clicks: %s %+v", got.State, got.Resolution)
	}
	for _, url := range urls {
		if b := r.a.s.Ratelimiter.GetBucket(url); b.Remaining != 1 {
			t.Errorf("the session's rate limiter kept the bucket of an interaction's callback (%d requests left in it)", b.Remaining)
		}
	}
}

// TestGatewayCallbackSentAgainAfterBadGateway: the callback, on a rate
// limiter of its own, is still sent again after a 502 (Discord refuses a
// second response, so the retry cannot answer twice), and the click is
// answered.
func TestGatewayCallbackSentAgainAfterBadGateway(t *testing.T) {
	r := newRig(t, rigOptions{gateway: true})
	if !r.fake.WaitFor(10*time.Second, func() bool { return r.fake.Connected() == 1 }) {
		t.Fatal("the adapter never connected to the gateway")
	}
	q := r.ask(decisionInput())
	card := r.card(q.ID, nil)
	r.fake.Fail(http.MethodPost, "/callback", http.StatusBadGateway, `<html>502 Bad Gateway</html>`, nil)
	click := r.fake.Click(alice, card.ID, r.button(card, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: 1}).CustomID)
	if err := r.fake.Dispatch(click); err != nil {
		t.Fatal(err)
	}
	if !r.fake.WaitFor(10*time.Second, func() bool { return len(r.fake.Responses(click.ID)) == 1 }) {
		t.Fatal("the click was not answered after a 502")
	}
	tries := 0
	for _, c := range r.fake.Calls() {
		if strings.HasSuffix(c.Path, "/callback") {
			tries++
		}
	}
	if tries != 2 {
		t.Fatalf("the callback was sent %d times; want twice (a 502, then the response)", tries)
	}
	if resp := r.fake.Responses(click.ID)[0]; resp.Type != discordfake.ResponseUpdateMessage {
		t.Fatalf("response %d %q, want the card updated", resp.Type, resp.Content())
	}
}

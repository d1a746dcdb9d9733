package discord

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestClickOverHTTPAnswersAndEditsCard: the card is posted through the
// outbox; a signed click answers and the response edits the card in
// place, which is its one edit: the outbox does not edit it again.
func TestClickOverHTTPAnswersAndEditsCard(t *testing.T) {
	r := newRig(t, rigOptions{})
	q := r.ask(decisionInput())
	msg := r.card(q.ID, nil)
	if !msg.Card || !strings.Contains(msg.Content, "Which database for the ledger?") || !strings.Contains(msg.Content, card.HardToReverseMarker) {
		t.Fatalf("card: %+v", msg)
	}
	b := r.button(msg, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: 1})
	resp := r.post(r.fake.Click(alice, msg.ID, b.CustomID))
	if resp.Type != discordfake.ResponseUpdateMessage || !strings.Contains(resp.Content(), "Answered by Alice") {
		t.Fatalf("response %d %q", resp.Type, resp.Content())
	}
	var data struct {
		Components *[]any `json:"components"`
		Content    *string
	}
	if err := json.Unmarshal(resp.Data, &data); err != nil || data.Components == nil || len(*data.Components) != 0 {
		t.Fatalf("UPDATE_MESSAGE must set components to []: %s", resp.Data)
	}
	got := r.question(q.ID)
	if got.State != core.StateAnswered || got.Resolution.OptionID != "ddb" || got.Resolution.Decider.ID != alice.ID ||
		got.Resolution.Decider.Surface != core.SurfaceDiscord || got.Resolution.Decider.Name != "Alice" {
		t.Fatalf("resolution %+v", got.Resolution)
	}
	// The card's update was held for the response and dropped once it
	// went out: the outbox is empty and the card was edited once, in
	// place.
	r.drained()
	if m := r.card(q.ID, nil); m.Edits != 1 || len(m.Buttons()) != 0 || !strings.Contains(m.Content, "DynamoDB") {
		t.Fatalf("card after the click: %d edits, %+v", m.Edits, m)
	}
	if n := r.patches(msg.ID); n != 0 {
		t.Fatalf("the outbox edited the card %d times over REST after the response did", n)
	}
}

// TestRoleDeciderAndRefusals: a role grants the right to decide; anyone
// else is told privately and the refusal is recorded.
func TestRoleDeciderAndRefusals(t *testing.T) {
	r := newRig(t, rigOptions{})
	q := r.ask(decisionInput())
	card := r.card(q.ID, nil)
	opt0 := r.button(card, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: 0})

	resp := r.post(r.fake.Click(mallory, card.ID, opt0.CustomID))
	if resp.Type != discordfake.ResponseMessage || resp.Flags()&discordfake.FlagEphemeral == 0 ||
		!strings.Contains(resp.Content(), "not one of the people who may answer") {
		t.Fatalf("stranger got %d %d %q", resp.Type, resp.Flags(), resp.Content())
	}
	if r.question(q.ID).State != core.StateOpen || count(r.events(q.ID), core.EventRefused) != 1 {
		t.Fatal("a stranger's click changed something or was not recorded")
	}
	// Mallory in a DM has no roles either.
	if resp := r.post(r.fake.Click(discordfake.User{ID: mallory.ID, Name: "Mallory", DM: true}, card.ID, opt0.CustomID)); resp.Flags()&discordfake.FlagEphemeral == 0 {
		t.Fatalf("DM stranger: %+v", resp)
	}

	resp = r.post(r.fake.Click(bob, card.ID, opt0.CustomID))
	if resp.Type != discordfake.ResponseUpdateMessage {
		t.Fatalf("role holder: %d %q", resp.Type, resp.Content())
	}
	// A second click, even by the winner, changes nothing and says who won.
	resp = r.post(r.fake.Click(alice, card.ID, opt0.CustomID))
	if resp.Flags()&discordfake.FlagEphemeral == 0 || !strings.Contains(resp.Content(), "Already closed") || !strings.Contains(resp.Content(), "Bob") {
		t.Fatalf("late click told %q", resp.Content())
	}
	if n := count(r.events(q.ID), core.EventAnswered); n != 1 {
		t.Fatalf("%d answered events", n)
	}
}

// TestClarificationThroughModal: "Answer" opens a modal whose custom_id is
// the ref; the submit answers with the typed text.
func TestClarificationThroughModal(t *testing.T) {
	r := newRig(t, rigOptions{})
	q := r.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	card := r.card(q.ID, nil)
	answer := r.button(card, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefText})

	// Someone who may not answer gets no modal: the refusal at once.
	if resp := r.post(r.fake.Click(mallory, card.ID, answer.CustomID)); resp.Type != discordfake.ResponseMessage ||
		!strings.Contains(resp.Content(), "not one of the people") {
		t.Fatalf("stranger opening the modal: %d %q", resp.Type, resp.Content())
	}
	resp := r.post(r.fake.Click(alice, card.ID, answer.CustomID))
	if resp.Type != discordfake.ResponseModal || resp.CustomID() != answer.CustomID {
		t.Fatalf("modal: %d %s", resp.Type, resp.Data)
	}
	resp = r.post(r.fake.Submit(alice, card.ID, resp.CustomID(), map[string]string{textInputID: "eu-west-1 *please*"}))
	if resp.Type != discordfake.ResponseUpdateMessage || !strings.Contains(resp.Content(), `eu-west-1 \*please\*`) {
		t.Fatalf("submit: %d %q", resp.Type, resp.Content())
	}
	if got := r.question(q.ID); got.State != core.StateAnswered || got.Resolution.Answer != "eu-west-1 *please*" {
		t.Fatalf("resolution %+v", got.Resolution)
	}
	// A submit on a closed question is refused truthfully.
	resp = r.post(r.fake.Submit(alice, card.ID, answer.CustomID, map[string]string{textInputID: "late"}))
	if !strings.Contains(resp.Content(), "Already closed") {
		t.Fatalf("late submit: %q", resp.Content())
	}
}

// TestDenyWithReasonAndApprove: Deny opens a modal for an optional reason;
// the reason is recorded.
func TestDenyWithReasonAndApprove(t *testing.T) {
	r := newRig(t, rigOptions{})
	in := core.AskInput{Kind: core.KindApproval, Text: "Drop the staging table?", Tool: "sql.exec", Arguments: json.RawMessage(`{"sql":"DROP TABLE staging"}`)}
	q := r.ask(in)
	card := r.card(q.ID, nil)
	deny := r.button(card, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefDeny})
	resp := r.post(r.fake.Click(alice, card.ID, deny.CustomID))
	if resp.Type != discordfake.ResponseModal {
		t.Fatalf("deny: %d", resp.Type)
	}
	if !strings.Contains(string(resp.Data), `"required":false`) {
		t.Fatalf("the reason must be optional: %s", resp.Data)
	}
	resp = r.post(r.fake.Submit(alice, card.ID, deny.CustomID, map[string]string{textInputID: "not on a Friday"}))
	if resp.Type != discordfake.ResponseUpdateMessage || !strings.Contains(resp.Content(), "Denied") || !strings.Contains(resp.Content(), "not on a Friday") {
		t.Fatalf("deny submit: %q", resp.Content())
	}
	got := r.question(q.ID)
	if got.Resolution.Approved == nil || *got.Resolution.Approved || got.Resolution.Reason != "not on a Friday" {
		t.Fatalf("resolution %+v", got.Resolution)
	}

	q2 := r.ask(in)
	card2 := r.card(q2.ID, nil)
	approve := r.button(card2, core.Ref{QuestionID: q2.ID, Item: -1, Action: core.RefApprove})
	if resp := r.post(r.fake.Click(alice, card2.ID, approve.CustomID)); resp.Type != discordfake.ResponseUpdateMessage {
		t.Fatalf("approve: %d %q", resp.Type, resp.Content())
	}
	if got := r.question(q2.ID); got.Resolution.Approved == nil || !*got.Resolution.Approved {
		t.Fatalf("approve resolution %+v", got.Resolution)
	}
}

// TestFormStepsAndSomethingElse: one item by button, the other by the
// free-text modal; the card shows progress between.
func TestFormStepsAndSomethingElse(t *testing.T) {
	r := newRig(t, rigOptions{})
	q := r.ask(core.AskInput{Kind: core.KindForm, Text: "Release plan", Reversibility: core.Reversible, Items: []core.FormItem{
		{ID: "day", Question: "Which day?", Options: []core.FormOption{{ID: "mon", Label: "Monday", Recommended: true}, {ID: "fri", Label: "Friday"}}},
		{ID: "notes", Question: "Release notes?", Options: []core.FormOption{{ID: "short", Label: "Short"}, {ID: "long", Label: "Long"}}},
	}})
	card := r.card(q.ID, nil)
	if card.Rows() != 3 || !strings.Contains(card.Content, "0/2") {
		t.Fatalf("form card: %d rows\n%s", card.Rows(), card.Content)
	}
	resp := r.post(r.fake.Click(alice, card.ID, r.button(card, core.Ref{QuestionID: q.ID, Item: 0, Action: core.RefOption, Option: 1}).CustomID))
	if resp.Type != discordfake.ResponseUpdateMessage || !strings.Contains(resp.Content(), "1/2") {
		t.Fatalf("first item: %q", resp.Content())
	}
	half, _ := r.fake.Message(card.ID)
	if half.Rows() != 2 {
		t.Fatalf("the answered item's row must go: %d rows", half.Rows())
	}
	other := r.button(half, core.Ref{QuestionID: q.ID, Item: 1, Action: core.RefText})
	if resp := r.post(r.fake.Click(alice, card.ID, other.CustomID)); resp.Type != discordfake.ResponseModal {
		t.Fatalf("something else: %d", resp.Type)
	}
	resp = r.post(r.fake.Submit(bob, card.ID, other.CustomID, map[string]string{textInputID: "Only the security fixes"}))
	if resp.Type != discordfake.ResponseUpdateMessage || !strings.Contains(resp.Content(), "Only the security fixes") {
		t.Fatalf("second item: %q", resp.Content())
	}
	if got := r.question(q.ID); got.State != core.StateAnswered || len(got.Answers) != 2 || got.Answers[1].Text != "Only the security fixes" {
		t.Fatalf("form %s %+v", got.State, got.Answers)
	}
}

// TestDeclineButton: "Skip" declines; the agent will proceed on its own.
func TestDeclineButton(t *testing.T) {
	r := newRig(t, rigOptions{})
	q := r.ask(decisionInput())
	card := r.card(q.ID, nil)
	skip := r.button(card, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefDecline})
	if resp := r.post(r.fake.Click(alice, card.ID, skip.CustomID)); !strings.Contains(resp.Content(), "Declined by Alice") {
		t.Fatalf("decline: %q", resp.Content())
	}
	if got := r.question(q.ID); got.State != core.StateDeclined {
		t.Fatalf("state %s", got.State)
	}
}

// TestUnverifiedRequestsChangeNothing: a bad signature, a stale or
// missing timestamp, and a replayed id; a PING is answered.
func TestUnverifiedRequestsChangeNothing(t *testing.T) {
	r := newRig(t, rigOptions{})
	q := r.ask(decisionInput())
	card := r.card(q.ID, nil)
	b := r.button(card, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: 0})
	for _, how := range []discordfake.Signing{discordfake.BadSignature, discordfake.StaleTimestamp, discordfake.Unsigned} {
		status, _, err := r.fake.Post(r.url, r.fake.Click(alice, card.ID, b.CustomID), how)
		if err != nil || status != http.StatusUnauthorized {
			t.Fatalf("signing %d: %d %v", how, status, err)
		}
	}
	if r.question(q.ID).State != core.StateOpen || len(r.events(q.ID)) != 2 { // asked, notified
		t.Fatalf("unverified requests reached core: %v", r.events(q.ID))
	}
	ping := r.fake.Raw(map[string]any{"type": 1, "application_id": r.fake.AppID, "version": 1})
	if resp := r.post(ping); resp.Type != discordfake.ResponsePong {
		t.Fatalf("ping: %d", resp.Type)
	}
	// The same interaction twice is handled once; the copy is told it
	// may have counted (copyNote).
	click := r.fake.Click(mallory, card.ID, b.CustomID)
	r.post(click)
	if resp := r.post(click); resp.Type != discordfake.ResponseMessage || resp.Content() != copyNote {
		t.Fatalf("replay: %d %q", resp.Type, resp.Content())
	}
	if n := count(r.events(q.ID), core.EventRefused); n != 1 {
		t.Fatalf("a replayed interaction reached core: %d refusals", n)
	}
	// Malformed JSON that is signed is a 400, not a panic.
	status, _, _ := r.fake.Post(r.url, discordfake.Interaction{ID: "x", Body: []byte(`{"type":3,"data":7}`)}, discordfake.Signed)
	if status != http.StatusBadRequest {
		t.Fatalf("malformed: %d", status)
	}
}

// TestForeignAndUnknownButtons: a custom_id askbridge did not write, and a
// ref to an unknown question, read the same.
func TestForeignAndUnknownButtons(t *testing.T) {
	r := newRig(t, rigOptions{appID: "290926444748734465"})
	q := r.ask(decisionInput())
	card := r.card(q.ID, nil)
	foreign := r.post(r.fake.Click(alice, card.ID, "click_one"))
	unknown := r.post(r.fake.Click(alice, card.ID, core.Ref{QuestionID: core.NewID(0), Item: -1, Action: core.RefOption}.Encode()))
	if foreign.Content() != unknown.Content() || foreign.Flags()&discordfake.FlagEphemeral == 0 {
		t.Fatalf("foreign %q vs unknown %q", foreign.Content(), unknown.Content())
	}
	// Another application's interaction is not ours either.
	raw := map[string]any{}
	json.Unmarshal(r.fake.Click(alice, card.ID, card.Buttons()[0].CustomID).Body, &raw)
	raw["application_id"] = "1"
	if resp := r.post(r.fake.Raw(raw)); resp.Content() != unknown.Content() {
		t.Fatalf("another app: %q", resp.Content())
	}
	if r.question(q.ID).State != core.StateOpen {
		t.Fatal("changed")
	}
}

// TestGatewayClickEndToEnd: with the gateway on, the adapter identifies
// with the Guilds intent only, and a click delivered as INTERACTION_CREATE
// is answered through the callback endpoint.
func TestGatewayClickEndToEnd(t *testing.T) {
	r := newRig(t, rigOptions{gateway: true})
	if !r.fake.WaitFor(10*time.Second, func() bool { return r.fake.Connected() == 1 }) {
		t.Fatal("the adapter never connected to the gateway")
	}
	var id struct {
		Intents int `json:"intents"`
	}
	if ids := r.fake.Identified(); len(ids) != 1 || json.Unmarshal(ids[0], &id) != nil || id.Intents != int(discordgo.IntentsGuilds) {
		t.Fatalf("identify: %s", r.fake.Identified())
	}
	q := r.ask(decisionInput())
	card := r.card(q.ID, nil)
	click := r.fake.Click(alice, card.ID, r.button(card, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: 0}).CustomID)
	if err := r.fake.Dispatch(click); err != nil {
		t.Fatal(err)
	}
	// A resume may replay the event: it is dropped.
	if err := r.fake.Dispatch(click); err != nil {
		t.Fatal(err)
	}
	if !r.fake.WaitFor(10*time.Second, func() bool { return len(r.fake.Responses(click.ID)) > 0 }) {
		t.Fatal("no interaction callback")
	}
	if resp := r.fake.Responses(click.ID)[0]; resp.Type != discordfake.ResponseUpdateMessage || !strings.Contains(resp.Content(), "PostgreSQL") {
		t.Fatalf("callback %d %q", resp.Type, resp.Content())
	}
	if got := r.question(q.ID); got.State != core.StateAnswered || got.Resolution.OptionID != "pg" {
		t.Fatalf("state %s", got.State)
	}
	m, _ := r.fake.Message(card.ID)
	if len(m.Buttons()) != 0 {
		t.Fatal("the callback did not edit the card")
	}

	// A modal with a component v0.29.0 cannot parse (a Label, type 18)
	// reaches the handler with Data nil: a private note, not a panic.
	bad := r.fake.Raw(map[string]any{"type": 5, "application_id": r.fake.AppID, "channel_id": roomID, "version": 1,
		"member": map[string]any{"user": map[string]any{"id": alice.ID, "username": "alice"}, "roles": []string{}},
		"data": map[string]any{"custom_id": core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefText}.Encode(), "components": []any{map[string]any{"type": 18, "label": "x",
			"component": map[string]any{"type": 4, "custom_id": "text", "value": "hi"}}}}})
	if err := r.fake.Dispatch(bad); err != nil {
		t.Fatal(err)
	}
	if !r.fake.WaitFor(10*time.Second, func() bool { return len(r.fake.Responses(bad.ID)) > 0 }) {
		t.Fatal("no answer to an unparseable modal")
	}
	if resp := r.fake.Responses(bad.ID)[0]; resp.Flags()&discordfake.FlagEphemeral == 0 {
		t.Fatalf("unparseable modal: %+v", resp)
	}
}

// TestCourierErrors: a 429 becomes RetryAfter, a missing channel or
// access becomes Permanent, a server error stays retryable.
func TestCourierErrors(t *testing.T) {
	fake := discordfake.New()
	t.Cleanup(fake.Close)
	a, err := New(nil, Options{Token: "Bot " + fake.Token, APIURL: fake.APIURL()})
	if err != nil {
		t.Fatal(err)
	}
	q := &core.Question{ID: core.NewID(0), Kind: core.KindClarification, Agent: "a", Text: "?", State: core.StateOpen}
	ctx := context.Background()

	fake.Fail("POST", "messages", 429, `{"message":"You are being rate limited.","retry_after":1.5,"global":false}`, nil)
	_, err = a.Post(ctx, q, core.MessageRef{Room: "1", Kind: core.DeliverPost})
	var ra *core.RetryAfter
	if !errors.As(err, &ra) || ra.After != 1500*time.Millisecond {
		t.Fatalf("429: %v", err)
	}
	fake.Fail("POST", "messages", 404, `{"message":"Unknown Channel","code":10003}`, nil)
	_, err = a.Post(ctx, q, core.MessageRef{Room: "1", Kind: core.DeliverPost})
	var perm *core.Permanent
	if !errors.As(err, &perm) {
		t.Fatalf("unknown channel: %v", err)
	}
	fake.Fail("PATCH", "messages", 403, `{"message":"Missing Access","code":50001}`, nil)
	if err := a.Update(ctx, q, core.MessageRef{Room: "1", ID: "2"}); !errors.As(err, &perm) {
		t.Fatalf("missing access: %v", err)
	}
	fake.Fail("POST", "messages", 500, `{"message":"oops","code":0}`, nil)
	err = a.Remind(ctx, q, "1")
	if err == nil || errors.As(err, &perm) || errors.As(err, &ra) {
		t.Fatalf("500: %v", err)
	}
	// And then it works, with the bot token, against the fake.
	ref, err := a.Post(ctx, q, core.MessageRef{Room: "1", Kind: core.DeliverPost})
	if err != nil || ref.ID == "" || ref.Room != "1" || ref.Surface != core.SurfaceDiscord {
		t.Fatalf("post: %+v %v", ref, err)
	}
	// A wrong token is refused by the fake, and not retried: permanent.
	bad, _ := New(nil, Options{Token: "wrong", APIURL: fake.APIURL()})
	if _, err := bad.Post(ctx, q, core.MessageRef{Room: "1", Kind: core.DeliverPost}); !errors.As(err, &perm) {
		t.Fatalf("a wrong token: %v (%T); want permanent", err, err)
	}
}

// TestTokenBucket: the courier takes a token per call and waits when none
// is left.
func TestTokenBucket(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	b := newTokenBucket(2, clock)
	for range 2 {
		if err := b.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := b.wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("an empty bucket gave a token: %v", err)
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	ctx2, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	for range 2 {
		if err := b.wait(ctx2); err != nil {
			t.Fatalf("a refilled bucket: %v", err)
		}
	}
}

// TestNewRejectsBadOptions names what is wrong.
func TestNewRejectsBadOptions(t *testing.T) {
	for _, o := range []Options{{}, {Token: "t", APIURL: "ftp://x/"}, {Token: "t", PublicKey: []byte{1, 2}}} {
		if _, err := New(nil, o); err == nil {
			t.Fatalf("%+v accepted", o)
		}
	}
}

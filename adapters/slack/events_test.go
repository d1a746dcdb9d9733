package slack_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
)

// TestReplyUnderSomeoneElsesMessageIsLeftAlone: a reply in a thread under
// a person's message is no answer, and Slack's event says whose message
// it is (parent_user_id), so the thread is not read; while Slack refuses
// reads (conversations.replies rate limited), the people chatting there
// hear nothing from askbridge. Before, every such reply cost a read, and
// each read Slack refused sent its writer "askbridge could not record
// that just now; please try again" about a question they never answered.
func TestReplyUnderSomeoneElsesMessageIsLeftAlone(t *testing.T) {
	e := newEnv(t, false)
	// Until auth.test answers, a root's author cannot be told ours or not
	// (the root is read then, and the reply marked): Run asks it at start.
	e.until("auth.test's answer", e.a.KnowsItself)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	card := e.card(q.ID)
	lunch := e.fake.AddReply(room, "", bob.ID, "lunch?")
	before := e.fake.Calls("conversations.replies")
	e.fake.FailNext("conversations.replies", slackfake.Failure{RetryAfter: 60})
	e.reply(alice, lunch, "yes, 12:30", 0)
	if n := e.fake.Calls("conversations.replies") - before; n != 0 {
		t.Fatalf("a thread under a person's message was read %d times", n)
	}
	// One person's notes go out in order: her first is her answer's.
	e.reply(alice, card, "eu-west-1", 0)
	if note := e.note(alice, 0); !strings.HasPrefix(note, "Recorded") {
		t.Fatalf("alice's first note is %q, not her answer's", note)
	}
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Answer != "eu-west-1" {
		t.Fatalf("the reply on the card: %s %+v", got.State, got.Resolution)
	}
}

// TestChatterIsNotMarkedSeen: a message that is no reply in a thread of
// ours (top-level chatter, a reply under a person's message) is left
// without a store write: only an event that may count is marked handled,
// against Slack's retries. Before, every message in every channel the bot
// is in cost a write (a disk sync on the embedded store) before its ack,
// and a key kept for an hour.
func TestChatterIsNotMarkedSeen(t *testing.T) {
	e := newEnv(t, false)
	// Until auth.test answers, a root's author cannot be told ours or not
	// (the root is read then, and the reply marked): Run asks it at start.
	e.until("auth.test's answer", e.a.KnowsItself)
	top, topID := e.fake.ReplyEvent(e.fake.AddReply(room, "", alice.ID, "morning all"))
	root := e.fake.AddReply(room, "", bob.ID, "lunch?")
	under, underID := e.fake.ReplyEvent(e.fake.AddReply(room, root.TS, alice.ID, "yes"))
	for _, body := range [][]byte{top, under} {
		if status, resp, err := slackfake.Event(e.srv.URL+slack.EventsPath, secret, body).Send(t.Context()); err != nil || status != http.StatusOK {
			t.Fatalf("event answered %d %q: %v", status, resp, err)
		}
	}
	for _, id := range []string{topID, underID} {
		// "slack:event:<id>" is the key a handled event is marked with.
		if !e.svc.FirstSeen(t.Context(), "slack:event:"+id, time.Hour) {
			t.Errorf("chatter %s was marked as handled", id)
		}
	}
}

// unreadableEvent is an Events API callback whose event the SDK cannot
// read: a thread reply's, its type one the SDK does not know.
func unreadableEvent(t *testing.T, e *env) []byte {
	t.Helper()
	body, _ := e.fake.ReplyEvent(e.fake.AddReply(room, "", alice.ID, "hello"))
	var p map[string]any
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatal(err)
	}
	p["event"].(map[string]any)["type"] = "scope_granted"
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestUnreadableEventIsAcknowledged: a signed event the SDK cannot read
// is answered 200 over HTTP and acknowledged over Socket Mode. Before,
// HTTP answered 400 and Socket Mode never acknowledged it, so Slack sent
// it again and again, each time a failure of the app, and Slack turns
// off the event subscriptions of an app that fails most of them.
func TestUnreadableEventIsAcknowledged(t *testing.T) {
	e := newEnv(t, true)
	body := unreadableEvent(t, e)
	if status, resp, err := slackfake.Event(e.srv.URL+slack.EventsPath, secret, body).Send(t.Context()); err != nil || status != http.StatusOK {
		t.Fatalf("an unreadable event answered %d %q: %v", status, resp, err)
	}
	// Not signed, it is still refused.
	if status, _, err := slackfake.Event(e.srv.URL+slack.EventsPath, "wrong", body).Send(t.Context()); err != nil || status != http.StatusUnauthorized {
		t.Fatalf("a forged unreadable event answered %d: %v", status, err)
	}
	env, err := e.fake.SendEnvelope("events_api", body, wait)
	if err != nil {
		t.Fatal(err)
	}
	e.until("the unreadable envelope's ack", func() bool { return e.fake.Acked(env) })
}

// TestRateLimitWithoutRetryAfterWaits: Slack's rate limits that name no
// wait (a rate_limited refusal, a 429 without Retry-After) are rate
// limits to the outbox too, with a wait of their own. Before, they were
// failed attempts, so a burst that refused a card eight times dropped it
// as undelivered, and the bare 429 was even taken for a post that might
// have gone out.
func TestRateLimitWithoutRetryAfterWaits(t *testing.T) {
	e := newEnv(t, false)
	q := e.ask(decision())
	e.card(q.ID)
	q = e.get(q.ID)
	for name, fl := range map[string]slackfake.Failure{
		"rate_limited":         {Error: "rate_limited"},
		"429 with no wait":     {Status: http.StatusTooManyRequests, Error: "ratelimited"},
		"ratelimited in a 200": {Error: "ratelimited"},
	} {
		e.fake.FailNext("chat.postMessage", fl)
		_, err := e.a.Post(t.Context(), q, core.MessageRef{Room: "C0OTHER", Kind: core.DeliverPost})
		var ra *core.RetryAfter
		if !errors.As(err, &ra) || ra.After <= 0 {
			t.Errorf("%s: post answered %v, want a rate limit with a wait", name, err)
		}
		e.fake.FailNext("chat.update", fl)
		err = e.a.Update(t.Context(), q, q.Messages[0])
		if !errors.As(err, &ra) || ra.After <= 0 {
			t.Errorf("%s: update answered %v, want a rate limit with a wait", name, err)
		}
	}
}

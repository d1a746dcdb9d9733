package telegram

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// tapFrom delivers a tap by Alice on data as if on message, and returns
// what the tapper was told.
func (e *env) tapFrom(message map[string]any, data string) string {
	e.t.Helper()
	c := e.fake.Messages(room)[0]
	u, qid, err := e.fake.CallbackUpdate(userAlice, room, c.ID, data)
	if err != nil {
		e.t.Fatal(err)
	}
	u["callback_query"].(map[string]any)["message"] = message
	if _, err := e.fake.Deliver(u); err != nil {
		e.t.Fatal(err)
	}
	note, err := e.fake.CallbackAnswer(qid, 10*time.Second)
	if err != nil {
		e.t.Fatal(err)
	}
	return note
}

// TestTapFromAnotherMessageIsRefused: a tap counts only if its data is
// on the message it came from, or that message is one of its question's
// cards. A modified client can send any callback_data; the message is
// Telegram's. Before, a question's Approve sent from another question's
// card, or from a message in a private chat, approved it.
func TestTapFromAnotherMessageIsRefused(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Drop the table?", Tool: "sql", Arguments: []byte(`{"q":"DROP TABLE t"}`)})
	c := e.card(q.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) == 3 })
	other := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Deploy?", Tool: "deploy", Arguments: []byte(`{}`)})
	c2 := e.card(other.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) == 3 })
	approve := findButton(t, c, "Approve")
	const refused = "That button is not on this question's card. Nothing was recorded."
	if note := e.click(userAlice, c2, approve); note != refused {
		t.Fatalf("from another question's card: told %q", note)
	}
	dm := map[string]any{"message_id": 1, "date": time.Now().Unix(), "text": "hello",
		"from": telegramfake.Bot, "chat": map[string]any{"id": userAlice.ID, "type": "private", "first_name": "Alice"}}
	if note := e.tapFrom(dm, approve.Data); note != refused {
		t.Fatalf("from a private chat: told %q", note)
	}
	if got, _ := e.svc.Get(t.Context(), q.ID); !got.Open() || len(e.events(q.ID, core.EventRefused)) != 0 {
		t.Fatalf("a tap from another message reached core: %s", got.State)
	}
	if note := e.click(userAlice, c, approve); note != "Recorded: Approved" {
		t.Fatalf("from its own card: told %q", note)
	}
	// Its card, edited since (its keyboard gone), still tells a late
	// tap how the question ended.
	e.card(q.ID, func(m telegramfake.Message) bool { return m.Edits > 0 })
	if note := e.click(userBob, c, approve); !strings.HasPrefix(note, "Already closed") {
		t.Fatalf("a late tap on the edited card: told %q", note)
	}
}

// remind sends q's reminder into the room and returns it.
func (e *env) remind(id core.QuestionID) telegramfake.Message {
	e.t.Helper()
	q, err := e.svc.Get(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.a.Remind(e.t.Context(), q, strconv.FormatInt(room, 10)); err != nil {
		e.t.Fatal(err)
	}
	msgs := e.fake.Messages(room)
	rem := msgs[len(msgs)-1]
	if !strings.Contains(rem.Text, card.ReminderHeading) {
		e.t.Fatalf("the last message is no reminder: %+v", rem)
	}
	return rem
}

// TestReplyToReminder: a clarification's reminder, a reply to its card,
// carries the card's ref, so a reply to the reminder answers as one to
// the card does; a reply to a reminder of a question that takes no
// reply is told how to answer. Before, both were dropped without a word.
func TestReplyToReminder(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	c := e.card(q.ID, func(telegramfake.Message) bool { return true })
	e.prompt(nil)
	rem := e.remind(q.ID)
	if rem.ReplyTo != c.ID {
		t.Fatalf("the reminder replies to %d, not the card %d", rem.ReplyTo, c.ID)
	}
	if _, err := e.fake.Reply(userAlice, room, rem.ID, "eu-west-1"); err != nil {
		t.Fatal(err)
	}
	if got := e.wait(q.ID, func(q *core.Question) bool { return !q.Open() }); got.Resolution.Answer != "eu-west-1" {
		t.Fatalf("the reply to the reminder: %+v", got.Resolution)
	}

	d := e.ask(decisionInput())
	e.card(d.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 0 })
	rem = e.remind(d.ID)
	before := len(e.fake.Messages(room))
	if _, err := e.fake.Reply(userAlice, room, rem.ID, "PostgreSQL"); err != nil {
		t.Fatal(err)
	}
	if got := e.lastText(before); !strings.Contains(got, "buttons on the question's card") {
		t.Fatalf("a reply to a decision's reminder was told %q", got)
	}
	if got, _ := e.svc.Get(t.Context(), d.ID); !got.Open() {
		t.Fatalf("the reply changed the decision: %s", got.State)
	}
}

// TestStrangerReplyInPrivateChatIsTold: someone who may not answer,
// replying in their private chat with the bot, is told so, as a stranger
// tapping is; in a group it stays a refusal recorded without a note.
// Before, the private reply was refused without a word.
func TestStrangerReplyInPrivateChatIsTold(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	e.card(q.ID, func(telegramfake.Message) bool { return true })
	dm, err := e.a.Post(t.Context(), e.get(q.ID), core.MessageRef{Room: core.DMRoom(strconv.FormatInt(userMallory.ID, 10)), Kind: core.DeliverPost})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := strconv.Atoi(dm.ID)
	before := len(e.fake.Messages(userMallory.ID))
	if _, err := e.fake.Reply(userMallory, userMallory.ID, id, "us-east-1"); err != nil {
		t.Fatal(err)
	}
	if !e.fake.Wait(5*time.Second, func() bool { return len(e.fake.Messages(userMallory.ID)) > before }) {
		t.Fatal("the stranger was told nothing in their private chat")
	}
	msgs := e.fake.Messages(userMallory.ID)
	if got := msgs[len(msgs)-1].Text; !strings.Contains(got, "not one of the people") {
		t.Fatalf("the stranger was told %q", got)
	}
	if got := e.get(q.ID); !got.Open() || len(e.events(q.ID, core.EventRefused)) != 1 {
		t.Fatalf("the stranger's reply: %s", got.State)
	}
}

func (e *env) get(id core.QuestionID) *core.Question {
	e.t.Helper()
	q, err := e.svc.Get(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return q
}

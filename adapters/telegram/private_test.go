package telegram

import (
	"strconv"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
)

// TestPrivateMessageIsToldHowToAnswer: a person who writes their answer
// in their private chat with the bot as a message of its own, rather
// than as a reply to the question's prompt, is told there that it was
// not recorded and how to answer; Telegram sending the update again does
// not tell them twice, and a reply under their own message is told the
// same. Before, it was dropped with nothing said, and the person took
// the question for answered while the agent waited on. Talk in a group
// that replies to nothing of the bot's is still left alone, and the
// reply to the prompt then counts.
func TestPrivateMessageIsToldHowToAnswer(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	dm := userAlice.ID // a private chat's id is its person's
	q := e.ask(clarificationInput())
	if _, err := e.a.Post(t.Context(), q, core.MessageRef{Room: core.DMRoom(strconv.FormatInt(dm, 10)), Kind: core.DeliverPost}); err != nil {
		t.Fatal(err)
	}
	var prompt telegramfake.Message
	for _, m := range e.fake.Messages(dm) {
		if m.ForceReply != nil {
			prompt = m
		}
	}
	if prompt.ID == 0 {
		t.Fatal("no prompt in the private chat")
	}
	bot := len(e.fake.Messages(dm))

	chatter, err := e.fake.ReplyUpdate(userAlice, room, 0, "morning all")
	if err != nil {
		t.Fatal(err)
	}
	e.deliverID(chatter)
	own, err := e.fake.ReplyUpdate(userAlice, dm, 0, "eu-west-1")
	if err != nil {
		t.Fatal(err)
	}
	e.deliverID(own)
	e.deliverID(own) // Telegram delivers it again
	ownID := own["message"].(map[string]any)["message_id"].(int)
	under, err := e.fake.ReplyUpdate(userAlice, dm, 0, "eu-west-1, I said")
	if err != nil {
		t.Fatal(err)
	}
	under["message"].(map[string]any)["reply_to_message"] = map[string]any{"message_id": ownID, "date": time.Now().Unix(),
		"text": "eu-west-1", "chat": map[string]any{"id": dm, "type": "private"},
		"from": map[string]any{"id": userAlice.ID, "is_bot": false, "first_name": userAlice.FirstName}}
	e.deliverID(under)
	e.notesSent()

	notes := e.fake.Messages(dm)[bot:]
	if len(notes) != 2 {
		t.Fatalf("%d notes in the private chat; want one for each message: %+v", len(notes), notes)
	}
	told := map[int]string{} // the notes go out each on its own, in any order
	for _, n := range notes {
		told[n.ReplyTo] = n.Text
	}
	for _, to := range []int{ownID, under["message"].(map[string]any)["message_id"].(int)} {
		if told[to] != privateNote {
			t.Errorf("message %d was told %q; want %q", to, told[to], privateNote)
		}
	}
	for _, m := range e.fake.Messages(room) {
		if m.ReplyTo == chatter["message"].(map[string]any)["message_id"].(int) {
			t.Fatalf("the group's chatter was told %q", m.Text)
		}
	}
	if got := e.get(q.ID); !got.Open() {
		t.Fatalf("a message in the private chat changed the question: %s", got.State)
	}

	if _, err := e.fake.Reply(userAlice, dm, prompt.ID, "eu-west-1"); err != nil {
		t.Fatal(err)
	}
	if got := e.wait(q.ID, func(q *core.Question) bool { return !q.Open() }); got.Resolution.Answer != "eu-west-1" {
		t.Fatalf("the reply to the prompt: %+v", got.Resolution)
	}
	e.notesSent()
	if n := len(e.fake.Messages(dm)); n != bot+2 {
		t.Fatalf("%d messages in the private chat after the answer; want %d", n, bot+2)
	}
}

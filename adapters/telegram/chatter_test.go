package telegram

import (
	"fmt"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
)

// deliverID delivers update u (through the webhook, so it is handled when
// Deliver returns) and returns the update id the fake gave it.
func (e *env) deliverID(u map[string]any) int {
	e.t.Helper()
	if status, err := e.fake.Deliver(u); err != nil || status != 200 {
		e.t.Fatalf("webhook answered %d: %v", status, err)
	}
	id, ok := u["update_id"].(int)
	if !ok {
		e.t.Fatalf("update id %v", u["update_id"])
	}
	return id
}

// marked reports whether update id was marked handled (firstSeen's key),
// marking it now if it was not.
func (e *env) marked(id int) bool {
	return !e.svc.FirstSeen(e.t.Context(), fmt.Sprintf("telegram:%d:update:%d", telegramfake.Bot.ID, id), time.Hour)
}

// TestChatterIsNotMarkedSeen: only a message that may act (a reply to one
// of the bot's own messages) is marked handled. A bot that is a group's
// administrator, or whose privacy mode is off, gets every message of the
// group, and a chat with it gets every message its person sends; before,
// each cost a store write (a disk sync on the embedded store) and a key
// kept for a day, as it did on Slack and Teams before theirs were fixed.
func TestChatterIsNotMarkedSeen(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	prompt := e.prompt(nil)

	plain, err := e.fake.ReplyUpdate(userAlice, room, 0, "morning all")
	if err != nil {
		t.Fatal(err)
	}
	// A reply to a person's message, as Telegram sends it: the message
	// replied to is theirs.
	under, err := e.fake.ReplyUpdate(userBob, room, 0, "yes")
	if err != nil {
		t.Fatal(err)
	}
	under["message"].(map[string]any)["reply_to_message"] = map[string]any{"message_id": 7, "date": time.Now().Unix(),
		"text": "lunch?", "chat": map[string]any{"id": room, "type": "supergroup"},
		"from": map[string]any{"id": userAlice.ID, "is_bot": false, "first_name": userAlice.FirstName}}
	for _, u := range []map[string]any{plain, under} {
		if id := e.deliverID(u); e.marked(id) {
			t.Errorf("chatter %d (%v) was marked as handled", id, u["message"].(map[string]any)["text"])
		}
	}
	// A reply to the bot's prompt may act: it is marked, so a copy
	// Telegram sends again is handled once.
	answer, err := e.fake.ReplyUpdate(userAlice, room, prompt.ID, "eu-west-1")
	if err != nil {
		t.Fatal(err)
	}
	if id := e.deliverID(answer); !e.marked(id) {
		t.Errorf("the reply to the prompt (%d) was not marked as handled", id)
	}
}

package telegram

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestPrivateChatTopicRoom: since Bot API 9.3 a bot whose topics mode is
// on has topics in its private chats, and sendMessage takes
// message_thread_id there. A room "<user id>:<topic id>" posts the card
// and its prompt into that topic of the person's private chat, and a
// reply there answers as anywhere. Before, the room was refused as a
// topic of a private chat (at the configuration's load and at every
// delivery), so such a route could post nowhere.
func TestPrivateChatTopicRoom(t *testing.T) {
	const dmTopic = 7
	dm := userAlice.ID // a private chat's id is its person's
	topicRoom := fmt.Sprintf("%d:%d", dm, dmTopic)
	if err := CheckRoom(topicRoom); err != nil {
		t.Fatalf("a private chat's topic was refused: %v", err)
	}
	e := newEnvIn(t, nil, coretest.OpenStore(t), topicRoom)
	e.fake.OpenTopic(dm, dmTopic, "askbridge", telegramfake.Bot)
	e.run()
	q := e.ask(clarificationInput())
	c := e.cardIn(dm, q.ID, func(telegramfake.Message) bool { return true })
	var prompt telegramfake.Message
	if !e.fake.Wait(10*time.Second, func() bool {
		for _, m := range e.fake.Messages(dm) {
			if m.ForceReply != nil && m.ReplyTo == c.ID {
				prompt = m
				return true
			}
		}
		return false
	}) {
		t.Fatal("no reply prompt in the private chat")
	}
	if c.Thread != dmTopic || prompt.Thread != dmTopic {
		t.Fatalf("the card went to topic %d, its prompt to %d; want %d", c.Thread, prompt.Thread, dmTopic)
	}
	for _, call := range e.sends(dm) {
		if call.Form.Get("message_thread_id") != strconv.Itoa(dmTopic) {
			t.Errorf("a message into the private chat's topic without its id: %v", call.Form)
		}
	}
	if _, err := e.fake.Reply(userAlice, dm, prompt.ID, "eu-west-1"); err != nil {
		t.Fatal(err)
	}
	got := e.wait(q.ID, func(q *core.Question) bool { return !q.Open() })
	if got.Resolution.Answer != "eu-west-1" || got.Resolution.Decider.ID != strconv.FormatInt(userAlice.ID, 10) {
		t.Fatalf("resolution %+v", got.Resolution)
	}

	// A private chat without topics (the bot's topics mode off) refuses
	// the topic for good, and the error says where to turn it on.
	_, err := e.a.Post(t.Context(), q, core.MessageRef{Room: fmt.Sprintf("%d:%d", userBob.ID, dmTopic), Kind: core.DeliverPost})
	var p *core.Permanent
	if !errors.As(err, &p) || !strings.Contains(err.Error(), "topics mode") {
		t.Errorf("posting to a topic of a private chat without topics: %v", err)
	}
}

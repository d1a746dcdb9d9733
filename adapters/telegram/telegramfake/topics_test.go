package telegramfake

import (
	"encoding/json"
	"strconv"
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// TestTopicsBehaveAsTelegramDoes: a message sent with message_thread_id
// goes into that topic and says so; a reply without it goes into the
// topic of the message it replies to; an id that names no topic, and a
// closed topic (General too), are refused as Telegram refuses them; and a
// person's message in a topic that replies to nothing carries the topic's
// creation message as its reply_to_message.
func TestTopicsBehaveAsTelegramDoes(t *testing.T) {
	s := Start(t, "1:tok")
	bot, err := tgbotapi.NewBotAPIWithAPIEndpoint("1:tok", s.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	const chat = int64(-100777)
	creator := tgbotapi.User{ID: 42, FirstName: "Ops"}
	s.OpenTopic(chat, 163, "deploys", creator)
	send := func(thread, replyTo int) (map[string]any, error) {
		p := tgbotapi.Params{"chat_id": strconv.FormatInt(chat, 10), "text": "x"}
		p.AddNonZero("message_thread_id", thread)
		p.AddNonZero("reply_to_message_id", replyTo)
		resp, err := bot.MakeRequest("sendMessage", p)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		return m, json.Unmarshal(resp.Result, &m)
	}
	in, err := send(163, 0)
	if err != nil || in["message_thread_id"] != float64(163) || in["is_topic_message"] != true {
		t.Fatalf("sent into the topic: %v, %v", in, err)
	}
	id := int(in["message_id"].(float64))
	if m, _ := s.Message(chat, id); m.Thread != 163 {
		t.Fatalf("the fake keeps it in thread %d", m.Thread)
	}
	reply, err := send(0, id)
	if err != nil || reply["message_thread_id"] != float64(163) {
		t.Fatalf("a reply without a thread: %v, %v", reply, err)
	}
	if general, err := send(0, 0); err != nil || general["message_thread_id"] != nil {
		t.Fatalf("a message to General: %v, %v", general, err)
	}
	for _, bad := range []int{1, 99} {
		if _, err := send(bad, 0); err == nil || err.Error() != "Bad Request: message thread not found" {
			t.Errorf("thread %d: %v", bad, err)
		}
	}
	s.CloseTopic(chat, 163)
	s.CloseTopic(chat, 0)
	for _, thread := range []int{163, 0} {
		if _, err := send(thread, 0); err == nil || err.Error() != "Bad Request: TOPIC_CLOSED" {
			t.Errorf("closed topic %d: %v", thread, err)
		}
	}
	u, err := s.TopicMessageUpdate(tgbotapi.User{ID: 5, FirstName: "A"}, chat, 163, "morning all")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(u)
	var got struct {
		Message struct {
			Thread  int  `json:"message_thread_id"`
			IsTopic bool `json:"is_topic_message"`
			Chat    struct {
				IsForum bool `json:"is_forum"`
			} `json:"chat"`
			ReplyTo struct {
				ID      int                        `json:"message_id"`
				From    tgbotapi.User              `json:"from"`
				Created map[string]json.RawMessage `json:"forum_topic_created"`
			} `json:"reply_to_message"`
		} `json:"message"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	m := got.Message
	if m.Thread != 163 || !m.IsTopic || !m.Chat.IsForum || m.ReplyTo.ID != 163 || m.ReplyTo.From.ID != creator.ID ||
		string(m.ReplyTo.Created["name"]) != `"deploys"` {
		t.Fatalf("topic message %s", raw)
	}
}

package telegram

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// topic is the forum topic the topic tests post into.
const topic = 163

func TestParseRoom(t *testing.T) {
	for _, c := range []struct {
		room string
		want place
		bad  string // part of the refusal
	}{
		{room: "-1001234567890", want: place{chat: -1001234567890}},
		{room: "259760855", want: place{chat: 259760855}},
		{room: "@259760855", want: place{chat: 259760855}},
		{room: "-1001234567890:163", want: place{chat: -1001234567890, thread: 163}},
		{room: "-1001234567890:1", bad: "General topic"},
		{room: "-1001234567890:0", bad: "names no topic"},
		{room: "-1001234567890:-5", bad: "names no topic"},
		{room: "-1001234567890:", bad: "names no topic"},
		{room: "-1001234567890:general", bad: "names no topic"},
		{room: "259760855:7", want: place{chat: 259760855, thread: 7}}, // Bot API 9.3: topics in private chats
		{room: "@259760855:7", bad: "is not a chat id"},
		{room: "ops", bad: "is not a chat id"},
		{room: "0", bad: "is not a chat id"},
		{room: "", bad: "is not a chat id"},
	} {
		got, err := parseRoom(c.room)
		if c.bad == "" {
			if err != nil || got != c.want || CheckRoom(c.room) != nil {
				t.Errorf("%q: %+v, %v; want %+v", c.room, got, err, c.want)
			}
			continue
		}
		var p *core.Permanent
		if !errors.As(err, &p) || !strings.Contains(err.Error(), c.bad) {
			t.Errorf("%q: %+v, %v; want a refusal saying %q", c.room, got, err, c.bad)
		}
		if err := CheckRoom(c.room); err == nil || !strings.Contains(err.Error(), c.bad) {
			t.Errorf("CheckRoom(%q) = %v", c.room, err)
		}
	}
}

// TestThreadParamsAreTheLibrarys: a message into a topic is the
// sendMessage request tgbotapi makes of it, field for field, with
// message_thread_id beside them; so a card in a topic is the card as
// elsewhere.
func TestThreadParamsAreTheLibrarys(t *testing.T) {
	card, err := RenderCard(cardOf(decision()), room)
	if err != nil {
		t.Fatal(err)
	}
	f := cardOf(form())
	prompt, err := RenderPrompt(f, core.Ref{QuestionID: f.QuestionID, Item: 1, Action: core.RefText}, room, 4072, &userAlice)
	if err != nil {
		t.Fatal(err)
	}
	note := tgbotapi.NewMessage(room, "<b>Already closed.</b>")
	note.ParseMode, note.ReplyToMessageID, note.AllowSendingWithoutReply, note.DisableNotification = tgbotapi.ModeHTML, 4073, true, true
	for name, m := range map[string]tgbotapi.MessageConfig{"card": card, "prompt": prompt, "note": note} {
		rec := &recorder{}
		bot := &tgbotapi.BotAPI{Token: "TOKEN", Client: rec}
		bot.SetAPIEndpoint("http://telegram.invalid/bot%s/%s")
		if _, err := bot.Request(m); err != nil {
			t.Fatal(err)
		}
		p, err := threadParams(m, topic)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bot.MakeRequest("sendMessage", p); err != nil {
			t.Fatal(err)
		}
		lib, ours := rec.reqs[0].form, rec.reqs[1].form
		if got := ours.Get("message_thread_id"); got != strconv.Itoa(topic) {
			t.Errorf("%s: message_thread_id %q", name, got)
		}
		ours.Del("message_thread_id")
		if !reflect.DeepEqual(lib, ours) {
			t.Errorf("%s: tgbotapi sends\n%v\nand the topic's request\n%v", name, lib, ours)
		}
	}
}

// TestTopicRoom: a route's room "<chat id>:<topic id>" posts its cards
// into that topic of a forum, whose General topic is closed: the card,
// its prompt, a tapper's prompt, a reminder and a note to a late replier
// all carry message_thread_id, a reply there answers as anywhere, and
// the card's edit names it by chat and id. A person's message in the
// topic that replies to nothing (its reply_to_message is the topic's
// creation message, here the bot's) is no reply to the bot. A plain chat
// id in the same route posts as before, with no topic. Before, the room
// was refused as no chat id, and a forum's cards could only go to
// General, which refused them once closed.
func TestTopicRoom(t *testing.T) {
	topicRoom := fmt.Sprintf("%d:%d", room, topic)
	e := newEnvIn(t, nil, coretest.OpenStore(t), topicRoom, strconv.FormatInt(room2, 10))
	e.fake.OpenTopic(room, topic, "deploys", telegramfake.Bot)
	e.fake.CloseTopic(room, 0)
	e.run()
	q := e.ask(clarificationInput())
	c := e.card(q.ID, func(telegramfake.Message) bool { return true })
	prompt := e.prompt(func(m telegramfake.Message) bool { return m.ReplyTo == c.ID })
	if c.Thread != topic || prompt.Thread != topic {
		t.Fatalf("the card went to topic %d, its prompt to %d", c.Thread, prompt.Thread)
	}
	plain := e.cardIn(room2, q.ID, func(telegramfake.Message) bool { return true })
	if plain.Thread != 0 {
		t.Fatalf("the plain room's card is in topic %d", plain.Thread)
	}
	if err := e.a.Remind(t.Context(), q, topicRoom); err != nil {
		t.Fatalf("the reminder: %v", err)
	}

	chatter, err := e.fake.TopicMessageUpdate(userAlice, room, topic, "morning all")
	if err != nil {
		t.Fatal(err)
	}
	sent := len(e.sends(room))
	if id := e.deliverID(chatter); e.marked(id) {
		t.Error("a message in the bot's topic that replies to nothing was taken for a reply to the bot")
	}

	if note := e.click(userBob, c, findButton(t, c, "Reply to answer")); !strings.Contains(note, "prompt that follows") {
		t.Fatalf("the tapper was told %q", note)
	}
	tapped := e.prompt(func(m telegramfake.Message) bool { return m.ForceReply.Selective })
	if tapped.Thread != topic {
		t.Fatalf("the tapper's prompt went to topic %d", tapped.Thread)
	}
	if _, err := e.fake.Reply(userAlice, room, prompt.ID, "eu-west-1"); err != nil {
		t.Fatal(err)
	}
	got := e.wait(q.ID, func(q *core.Question) bool { return !q.Open() })
	if got.Resolution.Answer != "eu-west-1" || got.Resolution.Decider.ID != strconv.FormatInt(userAlice.ID, 10) {
		t.Fatalf("resolution %+v", got.Resolution)
	}
	if edited := e.card(q.ID, func(m telegramfake.Message) bool { return m.Edits > 0 }); !strings.Contains(edited.Text, "Answer: eu-west-1") {
		t.Fatalf("the topic's card after the reply: %q", edited.Text)
	}
	before := len(e.fake.Messages(room))
	if _, err := e.fake.Reply(userBob, room, c.ID, "us-east-1"); err != nil {
		t.Fatal(err)
	}
	if got := e.lastText(before); !strings.HasPrefix(got, "Already closed") {
		t.Fatalf("the late replier was told %q", got)
	}
	e.notesSent()

	// card, prompt, reminder, tapper's prompt, note: all into the topic,
	// and nothing answered the chatter.
	if got := e.sends(room); len(got) != sent+2 || len(got) != 5 {
		t.Fatalf("%d messages into the topic's chat; want 5 (%d before the chatter)", len(got), sent)
	}
	for _, call := range e.sends(room) {
		if call.Form.Get("message_thread_id") != strconv.Itoa(topic) {
			t.Errorf("a message into the topic without its id: %v", call.Form)
		}
	}
	for _, call := range e.sends(room2) {
		if call.Form.Has("message_thread_id") {
			t.Errorf("a message into the plain room with a topic: %v", call.Form)
		}
	}
}

func clarificationInput() core.AskInput {
	return core.AskInput{Kind: core.KindClarification, Text: "Which region?"}
}

// TestAClosedTopicIsNamed: a send Telegram refuses because the topic is
// closed (General too, for a plain chat id of a forum), or because the
// room's topic id names none, fails for good, and the error says why and
// what to set the room to.
func TestAClosedTopicIsNamed(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(decisionInput())
	if err := e.a.hello(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.fake.OpenTopic(room, topic, "deploys", userAlice)
	e.fake.CloseTopic(room, 0)
	for r, want := range map[string]string{
		strconv.FormatInt(room, 10):    "reopen it, or set the room to an open topic, <chat id>:<topic id>",
		fmt.Sprintf("%d:%d", room, 99): "names no topic of the chat",
	} {
		_, err := e.a.Post(t.Context(), q, core.MessageRef{Room: r, Kind: core.DeliverPost})
		var p *core.Permanent
		if !errors.As(err, &p) || !strings.Contains(err.Error(), want) {
			t.Errorf("posting to %s: %v; want a permanent error saying %q", r, err, want)
		}
	}
	if _, err := e.a.Post(t.Context(), q, core.MessageRef{Room: fmt.Sprintf("%d:%d", room, topic), Kind: core.DeliverPost}); err != nil {
		t.Errorf("posting to the open topic: %v", err)
	}
}

// TestTopicRoomSpendsItsChatsBudgets: Telegram's limits are per chat, and
// a topic's messages are its chat's: a topic room spends the chat's and
// the group's budgets, as the chat id alone does.
func TestTopicRoomSpendsItsChatsBudgets(t *testing.T) {
	e := newEnv(t, nil)
	keys := func(r string) []string {
		var out []string
		for _, a := range e.a.Budgets(core.Delivery{Kind: core.DeliverPost, Room: r}) {
			out = append(out, a.Key)
		}
		return out
	}
	plain, inTopic := keys(strconv.FormatInt(room, 10)), keys(fmt.Sprintf("%d:%d", room, topic))
	if strings.Join(plain, " ") != strings.Join(inTopic, " ") || len(plain) != 3 {
		t.Fatalf("a topic spends %v; its chat %v", inTopic, plain)
	}
}

// TestDecodeUpdateReadsTopics: a message in a forum topic, a tap on a
// card in one and an edit there are read with their topic; a reply in a
// supergroup that is no forum carries the id of its thread of replies,
// which is no topic to post into; and a message in a topic that replies
// to nothing is no reply, though Telegram gives it the topic's creation
// message as reply_to_message.
func TestDecodeUpdateReadsTopics(t *testing.T) {
	msg := func(extra string) string {
		return `{"message_id":9,"date":1,"chat":{"id":-1001,"type":"supergroup"},"from":{"id":5,"is_bot":false,"first_name":"A"},"text":"x"` + extra + `}`
	}
	root := `,"reply_to_message":{"message_id":163,"date":1,"chat":{"id":-1001,"type":"supergroup"},"from":{"id":1,"is_bot":true,"first_name":"B"},"forum_topic_created":{"name":"deploys","icon_color":7322096}}`
	card := `,"reply_to_message":{"message_id":170,"date":1,"chat":{"id":-1001,"type":"supergroup"},"from":{"id":1,"is_bot":true,"first_name":"B"},"text":"card"}`
	topicOf := `,"message_thread_id":163,"is_topic_message":true`
	for _, c := range []struct {
		name    string
		raw     string
		thread  int
		replyTo int // the message m replies to, 0: none
	}{
		{"a reply in a topic", `{"update_id":1,"message":` + msg(topicOf+card) + `}`, 163, 170},
		{"a message in a topic", `{"update_id":1,"message":` + msg(topicOf+root) + `}`, 163, 0},
		{"its edit", `{"update_id":1,"edited_message":` + msg(topicOf+root+`,"edit_date":2`) + `}`, 163, 0},
		{"a reply in a group that is no forum", `{"update_id":1,"message":` + msg(`,"message_thread_id":170`+card) + `}`, 0, 170},
		{"a message in General", `{"update_id":1,"message":` + msg("") + `}`, 0, 0},
		{"a tap on a card in a topic", `{"update_id":1,"callback_query":{"id":"q","from":{"id":5,"is_bot":false,"first_name":"A"},"chat_instance":"c","data":"d","message":` + msg(topicOf) + `}}`, 163, 0},
	} {
		u, err := decodeUpdate([]byte(c.raw))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		m := u.Message
		if m == nil {
			m = u.EditedMessage
		}
		replyTo := 0
		if m != nil && m.ReplyToMessage != nil {
			replyTo = m.ReplyToMessage.MessageID
		}
		if u.thread != c.thread || replyTo != c.replyTo || u.UpdateID != 1 {
			t.Errorf("%s: thread %d, replying to %d; want %d, %d", c.name, u.thread, replyTo, c.thread, c.replyTo)
		}
	}
	if _, err := decodeUpdate([]byte(`{"update_id":1,"message":{"chat":"x"}}`)); err == nil {
		t.Error("an update tgbotapi cannot read was read")
	}
}

// TestPollingReadsTopicsAndSkipsTheUnreadable: getUpdates reads each
// update as the webhook does (with its topic), and one it cannot read
// keeps its id alone, so the offset passes it rather than the whole
// batch failing at every poll.
func TestPollingReadsTopicsAndSkipsTheUnreadable(t *testing.T) {
	e := newEnv(t, newMemKV())
	e.fake.OpenTopic(room, topic, "deploys", userBob)
	u, err := e.fake.TopicMessageUpdate(userAlice, room, topic, "eu-west-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []map[string]any{{"message": map[string]any{"chat": "x"}}, u} {
		if _, err := e.fake.Deliver(x); err != nil {
			t.Fatal(err)
		}
	}
	got, err := e.a.getUpdates(t.Context(), tgbotapi.UpdateConfig{Timeout: 1})
	if err != nil || len(got) != 2 {
		t.Fatalf("%d updates, %v", len(got), err)
	}
	if bad := got[0]; bad.UpdateID == 0 || bad.Message != nil {
		t.Errorf("the unreadable update: %+v", bad)
	}
	if read := got[1]; read.thread != topic || read.Message == nil || read.Message.Text != "eu-west-1" || read.Message.ReplyToMessage != nil {
		t.Errorf("the topic's message: thread %d, %+v", read.thread, read.Message)
	}
}

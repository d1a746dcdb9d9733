package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/askbridge/askbridge/core"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// A forum supergroup splits its messages into topics, and so, since Bot
// API 9.3, does a person's private chat with a bot whose topics mode is
// on ("Supported the parameter message_thread_id in private chats with
// topics in the methods sendMessage, ...", core.telegram.org/bots/
// api-changelog, December 31, 2025). A room of the form
// "<chat id>:<topic id>" posts into one topic of either: its cards, their
// prompts, reminders and the notes to its repliers all carry
// message_thread_id (the Bot API's name for the topic's id), as a message
// without it goes to the General topic, which a forum may have closed
// (every send then fails with TOPIC_CLOSED). Replies carry it too: a
// reply goes to the topic of the message it answers, but one sent with
// allow_sending_without_reply after that message was deleted would go to
// General. A plain chat id posts as it always did. Edits need no topic: editMessageText names a message by
// its chat and id alone. tgbotapi v5.5.1 predates topics: sendMessage is
// then built here (threadParams), and the topic fields of updates are
// read beside the library's decoding (decodeUpdate).

// place is where a message goes: a chat and, in a forum, the topic in it
// (thread 0: none, so the chat itself, or a forum's General topic).
type place struct {
	chat   int64
	thread int
}

// generalTopic is the General topic's id, which sendMessage refuses as
// message_thread_id ("message thread not found"): General is the chat id
// alone.
const generalTopic = 1

// parseRoom reads a route's room: a chat id, a person's private chat
// (core.DMRoom: its id is the user's), or a topic "<chat id>:<topic id>"
// of a forum supergroup (a negative chat id) or of a private chat (the
// user's id). A room it refuses can never be sent to; one whose chat has
// no such topic (a private chat without the bot's topics mode) is
// refused by Telegram at its send, and classify names why.
func parseRoom(room string) (place, error) {
	bad := func(why string) (place, error) {
		return place{}, &core.Permanent{Err: fmt.Errorf("telegram: room %q %s", room, why)}
	}
	id, topic, isTopic := strings.Cut(room, ":")
	if user, ok := core.DMUser(id); ok && !isTopic {
		id = user // a private chat's id is its user's id
	}
	chat, err := strconv.ParseInt(id, 10, 64)
	if err != nil || chat == 0 {
		return bad("is not a chat id, nor <chat id>:<topic id>")
	}
	if !isTopic {
		return place{chat: chat}, nil
	}
	thread, err := strconv.Atoi(topic)
	switch {
	case err != nil || thread <= 0:
		return bad("names no topic: after the chat id and a colon comes the topic's id (message_thread_id), a positive number")
	case thread == generalTopic:
		return bad("names the General topic, which Telegram takes without a topic id: use the chat id alone")
	}
	return place{chat: chat, thread: thread}, nil
}

// CheckRoom reports whether room is a Telegram room the adapter can post
// to, and if not, why: for the configuration's check at load, so a bad
// room is refused there rather than failing every delivery.
func CheckRoom(room string) error {
	_, err := parseRoom(room)
	var p *core.Permanent
	if errors.As(err, &p) {
		return p.Err
	}
	return err
}

// post sends m to `to` now, with Telegram's errors classified: through
// tgbotapi as it is outside a topic, and with message_thread_id added
// (threadParams) in one.
func (a *Adapter) post(ctx context.Context, to place, m tgbotapi.MessageConfig) (tgbotapi.Message, error) {
	if to.thread == 0 {
		sent, err := a.api(ctx).Send(m)
		return sent, classify(err)
	}
	p, err := threadParams(m, to.thread)
	if err != nil {
		return tgbotapi.Message{}, &core.Permanent{Err: err}
	}
	resp, err := a.api(ctx).MakeRequest("sendMessage", p)
	if err != nil {
		return tgbotapi.Message{}, classify(err)
	}
	var sent tgbotapi.Message
	err = json.Unmarshal(resp.Result, &sent)
	return sent, err
}

// threadParams is the sendMessage request tgbotapi makes of m (its
// BaseChat's and MessageConfig's fields, as v5.5.1 writes them), with
// message_thread_id, which v5.5.1 lacks, added. TestThreadParamsAreTheLibrarys
// holds the two to the same form.
func threadParams(m tgbotapi.MessageConfig, thread int) (tgbotapi.Params, error) {
	p := tgbotapi.Params{}
	if err := p.AddFirstValid("chat_id", m.ChatID, m.ChannelUsername); err != nil {
		return nil, err
	}
	p.AddNonZero("message_thread_id", thread)
	p.AddNonZero("reply_to_message_id", m.ReplyToMessageID)
	p.AddBool("disable_notification", m.DisableNotification)
	p.AddBool("allow_sending_without_reply", m.AllowSendingWithoutReply)
	if err := p.AddInterface("reply_markup", m.ReplyMarkup); err != nil {
		return nil, err
	}
	p.AddNonEmpty("text", m.Text)
	p.AddBool("disable_web_page_preview", m.DisableWebPagePreview)
	p.AddNonEmpty("parse_mode", m.ParseMode)
	return p, p.AddInterface("entities", m.Entities)
}

// incoming is one update as the adapter handles it: tgbotapi's, and the
// topic its message is in (0: none), which v5.5.1 does not read.
type incoming struct {
	tgbotapi.Update
	thread int
}

// topicFields are what v5.5.1's Message lacks of a message in a forum
// topic.
type topicFields struct {
	Thread  int  `json:"message_thread_id"`
	IsTopic bool `json:"is_topic_message"`
	ReplyTo *struct {
		Created json.RawMessage `json:"forum_topic_created"`
	} `json:"reply_to_message"`
}

// decodeUpdate reads one update. A message in a forum topic carries
// message_thread_id and is_topic_message; only then is its thread a
// topic to answer into (in any supergroup a reply carries the id of the
// thread of replies it is in, which sendMessage refuses as a topic). A
// message in a topic that replies to nothing carries the topic's
// creation message as its reply_to_message: that is no reply, so it is
// dropped, and a message in a topic the bot created is not taken for a
// reply to the bot.
func decodeUpdate(raw []byte) (incoming, error) {
	var u incoming
	if err := json.Unmarshal(raw, &u.Update); err != nil {
		return u, err
	}
	var t struct {
		Message       *topicFields `json:"message"`
		EditedMessage *topicFields `json:"edited_message"`
		CallbackQuery *struct {
			Message *topicFields `json:"message"`
		} `json:"callback_query"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return u, err
	}
	f, m := t.Message, u.Message
	switch {
	case u.EditedMessage != nil:
		f, m = t.EditedMessage, u.EditedMessage
	case u.CallbackQuery != nil && t.CallbackQuery != nil:
		f, m = t.CallbackQuery.Message, nil // the bot's own card
	}
	if f == nil {
		return u, nil
	}
	if f.IsTopic {
		u.thread = f.Thread
	}
	if m != nil && f.ReplyTo != nil && len(f.ReplyTo.Created) > 0 {
		m.ReplyToMessage = nil
	}
	return u, nil
}

package telegramfake

import (
	"fmt"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// A forum supergroup's messages each belong to a topic (and, since Bot
// API 9.3, a private chat's, once the bot's topics mode is on: OpenTopic
// on a user's id makes their chat with the bot one with topics): the
// General topic, or one whose id (message_thread_id) is the id of the service
// message that created it (forum_topic_created). sendMessage takes
// message_thread_id to post into a topic; without it a message goes to
// General, unless it replies to a message, when it goes to that message's
// topic. A closed topic takes no messages (400 TOPIC_CLOSED), and an id
// that names no topic is refused ("message thread not found"). Every
// message of a topic carries message_thread_id and is_topic_message; one
// that replies to nothing carries the topic's creation message as its
// reply_to_message (the fixture telegram-update-message-topic.json).

// forum is a chat's topics, once one is opened in it.
type forum struct {
	topics        map[int]*topic
	generalClosed bool
}

type topic struct {
	name    string
	creator tgbotapi.User
	closed  bool
}

// OpenTopic makes chat a forum (if it is not yet) with topic id, named
// name and created by creator.
func (s *Server) OpenTopic(chat int64, id int, name string, creator tgbotapi.User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.forumOf(chat)
	f.topics[id] = &topic{name: name, creator: creator}
}

// CloseTopic closes topic id of chat's forum; id 0 closes General.
func (s *Server) CloseTopic(chat int64, id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.forumOf(chat)
	if id == 0 {
		f.generalClosed = true
		return
	}
	if t := f.topics[id]; t != nil {
		t.closed = true
	}
}

// forumOf is chat's forum, made one if it is not; call with mu held.
func (s *Server) forumOf(chat int64) *forum {
	if s.forums == nil {
		s.forums = map[int64]*forum{}
	}
	f := s.forums[chat]
	if f == nil {
		f = &forum{topics: map[int]*topic{}}
		s.forums[chat] = f
	}
	return f
}

// placeIn decides the topic a message sent to chat goes to, as Telegram
// does: thread as asked, else the topic of the message it replies to
// (replied, if found), else General (0). It refuses a thread in a chat
// that is no forum or that names no topic, and a closed topic. Call with
// mu held.
func (s *Server) placeIn(chat int64, thread int, replied *Message) (int, *Failure) {
	f := s.forums[chat]
	if thread == 0 && replied != nil {
		thread = replied.Thread
	}
	switch {
	case thread != 0 && (f == nil || f.topics[thread] == nil):
		return 0, badRequest("message thread not found")
	case thread != 0 && f.topics[thread].closed, thread == 0 && f != nil && f.generalClosed:
		return 0, badRequest("TOPIC_CLOSED")
	}
	return thread, nil
}

// TopicMessageUpdate builds the message update of a person's message in
// topic thread of chat that replies to nothing, shaped like the fixture:
// message_thread_id and is_topic_message set, and reply_to_message the
// topic's creation message, from the topic's creator.
func (s *Server) TopicMessageUpdate(from tgbotapi.User, chat int64, thread int, text string) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.forums[chat]
	if f == nil || f.topics[thread] == nil {
		return nil, fmt.Errorf("telegramfake: no topic %d in chat %d", thread, chat)
	}
	t := f.topics[thread]
	u := fixture("telegram-update-message-topic.json")
	delete(u, "update_id")
	msg := u["message"].(map[string]any)
	s.nextMsg++
	msg["message_id"] = s.nextMsg
	msg["message_thread_id"] = thread
	msg["from"] = wireUser(from)
	msg["chat"] = s.wireChat(chat)
	msg["date"] = s.now().Unix()
	msg["text"] = text
	root := msg["reply_to_message"].(map[string]any)
	root["message_id"] = thread
	root["from"] = wireUser(t.creator)
	root["chat"] = s.wireChat(chat)
	root["forum_topic_created"].(map[string]any)["name"] = t.name
	return u, nil
}

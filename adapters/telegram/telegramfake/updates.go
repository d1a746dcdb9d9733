package telegramfake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// CallbackUpdate builds a callback_query update for a click by from on
// button data of message (chat, id), from the captured real update. It
// registers the query so the bot may answer it once; the returned id is
// the query's. The update id is filled in by Deliver.
func (s *Server) CallbackUpdate(from tgbotapi.User, chat int64, id int, data string) (map[string]any, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.find(chat, id)
	if m == nil {
		return nil, "", fmt.Errorf("telegramfake: no message %d in chat %d", id, chat)
	}
	s.nextQuery++
	qid := strconv.Itoa(1115664380233733737 + s.nextQuery)
	s.queries[qid] = &query{done: make(chan struct{})}
	u := fixture("telegram-update-callback-query.json")
	delete(u, "update_id") // renumbered by Deliver: fixtures' ids are unrelated
	cq := u["callback_query"].(map[string]any)
	cq["id"] = qid
	cq["from"] = wireUser(from)
	cq["message"] = s.wireMessage(m)
	cq["data"] = data
	return u, qid, nil
}

// ReplyUpdate builds a message update: from answers message (chat,
// replyTo) with text, shaped like the documented "message with a reply".
// replyTo 0 sends a plain message.
func (s *Server) ReplyUpdate(from tgbotapi.User, chat int64, replyTo int, text string) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := fixture("telegram-update-message-reply.json")
	delete(u, "update_id")
	msg := u["message"].(map[string]any)
	s.nextMsg++
	msg["message_id"] = s.nextMsg
	msg["from"] = wireUser(from)
	msg["chat"] = s.wireChat(chat)
	msg["date"] = s.now().Unix()
	msg["text"] = text
	delete(msg, "reply_to_message")
	if replyTo != 0 {
		m := s.find(chat, replyTo)
		if m == nil {
			return nil, fmt.Errorf("telegramfake: no message %d in chat %d", replyTo, chat)
		}
		msg["reply_to_message"] = s.wireMessage(m)
		if m.Thread != 0 {
			// A reply is in the topic of the message it replies to.
			msg["message_thread_id"], msg["is_topic_message"] = m.Thread, true
		}
	}
	return u, nil
}

// FormattedReplyUpdate is ReplyUpdate for a reply its writer formatted
// (links, bold...), given as Telegram-style HTML: the update carries the
// plain text and its entities array, as a client sends them (offsets in
// UTF-16 units; a link is a text_link entity whose url is not in the
// text).
func (s *Server) FormattedReplyUpdate(from tgbotapi.User, chat int64, replyTo int, html string) (map[string]any, error) {
	text, entities, err := Parse(html)
	if err != nil {
		return nil, err
	}
	u, err := s.ReplyUpdate(from, chat, replyTo, text)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(entities)
	if err != nil {
		return nil, err
	}
	var wire []any
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, err
	}
	u["message"].(map[string]any)["entities"] = wire
	return u, nil
}

// PhotoReplyUpdate is ReplyUpdate for a photo with a caption instead of
// text, shaped like the Bot API's Message with `photo` and `caption`.
func (s *Server) PhotoReplyUpdate(from tgbotapi.User, chat int64, replyTo int, caption string) (map[string]any, error) {
	u, err := s.ReplyUpdate(from, chat, replyTo, "")
	if err != nil {
		return nil, err
	}
	photo := fixture("telegram-update-message-photo-reply.json")["message"].(map[string]any)
	msg := u["message"].(map[string]any)
	delete(msg, "text")
	msg["photo"], msg["caption"] = photo["photo"], caption
	return u, nil
}

// EditUpdate builds the edited_message update Telegram sends when the
// writer of message update orig (one ReplyUpdate built) edits it to text,
// shaped like the documented "edited message": the message as it now
// stands, its id, chat, writer, date and the message it replies to kept,
// and edit_date the time of the edit.
func (s *Server) EditUpdate(orig map[string]any, text string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := fixture("telegram-update-edited-message.json")
	delete(u, "update_id")
	msg, was := u["edited_message"].(map[string]any), orig["message"].(map[string]any)
	for _, k := range []string{"message_id", "message_thread_id", "is_topic_message", "from", "chat", "date", "reply_to_message"} {
		if v, ok := was[k]; ok {
			msg[k] = v
		}
	}
	msg["text"] = text
	msg["edit_date"] = s.now().Unix()
	return u
}

// Deliver hands an update to the bot: POSTed to the webhook with the
// registered secret token when one is set, else queued for getUpdates
// (status 0). It assigns the next update id unless u already has one.
func (s *Server) Deliver(u map[string]any) (status int, err error) {
	s.mu.Lock()
	secret := s.webhook.Secret
	s.mu.Unlock()
	return s.DeliverWithSecret(u, secret)
}

// DeliverWithSecret is Deliver with a chosen secret-token header, to forge.
func (s *Server) DeliverWithSecret(u map[string]any, secret string) (int, error) {
	s.mu.Lock()
	if _, ok := u["update_id"]; !ok || u["update_id"] == nil {
		s.nextUpd++
		u["update_id"] = s.nextUpd
	}
	raw, err := json.Marshal(u)
	if err != nil {
		s.mu.Unlock()
		return 0, err
	}
	target := s.target
	if target == "" {
		target = s.webhook.URL
	}
	if s.webhook.URL == "" {
		var id int
		switch v := u["update_id"].(type) {
		case int:
			id = v
		case float64:
			id = int(v)
		}
		s.queue = append(s.queue, raw)
		s.queueIDs = append(s.queueIDs, id)
		s.notify()
		s.mu.Unlock()
		return 0, nil
	}
	s.mu.Unlock()
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(raw))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Click delivers a click by from on button data of message (chat, id) and
// waits (up to timeout) for the bot to answer the callback query; it
// returns the answer's text.
func (s *Server) Click(from tgbotapi.User, chat int64, id int, data string, timeout time.Duration) (string, error) {
	u, qid, err := s.CallbackUpdate(from, chat, id, data)
	if err != nil {
		return "", err
	}
	status, err := s.Deliver(u)
	if err != nil {
		return "", err
	}
	if status != 0 && status != http.StatusOK {
		return "", fmt.Errorf("telegramfake: webhook answered %d", status)
	}
	return s.CallbackAnswer(qid, timeout)
}

// CallbackAnswer waits for the answer to callback query qid.
func (s *Server) CallbackAnswer(qid string, timeout time.Duration) (string, error) {
	s.mu.Lock()
	q := s.queries[qid]
	s.mu.Unlock()
	if q == nil {
		return "", fmt.Errorf("telegramfake: unknown query %s", qid)
	}
	select {
	case <-q.done:
		s.mu.Lock()
		defer s.mu.Unlock()
		return q.text, nil
	case <-time.After(timeout):
		return "", fmt.Errorf("telegramfake: callback query %s was not answered within %s", qid, timeout)
	}
}

// Answered reports whether callback query qid has been answered.
func (s *Server) Answered(qid string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queries[qid]
	return q != nil && q.answered
}

// Reply delivers a reply by from to message (chat, replyTo).
func (s *Server) Reply(from tgbotapi.User, chat int64, replyTo int, text string) (int, error) {
	u, err := s.ReplyUpdate(from, chat, replyTo, text)
	if err != nil {
		return 0, err
	}
	return s.Deliver(u)
}

// Pending is how many queued updates getUpdates has not had confirmed
// (by an offset past them).
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// getUpdates long-polls the queue. A newer getUpdates ends the one in
// flight with 409, as Telegram does.
func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request, f url.Values) {
	offset, _ := strconv.Atoi(f.Get("offset"))
	timeout, _ := strconv.Atoi(f.Get("timeout"))
	mine := make(chan struct{})
	s.mu.Lock()
	if s.webhook.URL != "" {
		s.mu.Unlock()
		reply(w, nil, &Failure{Code: 409, Description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"})
		return
	}
	if s.polling != nil {
		close(s.polling)
	}
	s.polling = mine
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.polling == mine {
			s.polling = nil
		}
		s.mu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(timeout)*time.Second)
	defer cancel()
	for {
		s.mu.Lock()
		// An offset confirms every update before it.
		for len(s.queueIDs) > 0 && offset > 0 && s.queueIDs[0] < offset {
			s.queue, s.queueIDs = s.queue[1:], s.queueIDs[1:]
		}
		batch := slices.Clone(s.queue)
		ch := s.changes.C()
		s.mu.Unlock()
		if len(batch) > 0 {
			if len(batch) > 100 {
				batch = batch[:100]
			}
			reply(w, batch, nil)
			return
		}
		select {
		case <-ch:
		case <-mine:
			reply(w, nil, &Failure{Code: 409, Description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"})
			return
		case <-ctx.Done():
			reply(w, []any{}, nil)
			return
		}
	}
}

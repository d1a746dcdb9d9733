package telegramfake

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		reply(w, nil, &Failure{Code: 404, Description: "Not Found"})
		return
	}
	if token != s.Token {
		reply(w, nil, &Failure{Code: 401, Description: "Unauthorized"})
		return
	}
	if err := r.ParseForm(); err != nil {
		reply(w, nil, &Failure{Code: 400, Description: "Bad Request: " + err.Error()})
		return
	}
	s.mu.Lock()
	s.calls = append(s.calls, Call{Method: method, Form: r.PostForm})
	var fail *Failure
	if fs := s.failures[method]; len(fs) > 0 {
		fail, s.failures[method] = &fs[0], fs[1:]
	}
	if chat, err := strconv.ParseInt(r.PostForm.Get("chat_id"), 10, 64); fail == nil && err == nil && method == "sendMessage" && s.overLimit(chat, s.now()) {
		fail = &Failure{Code: 429, Description: "Too Many Requests: retry after 1", RetryAfter: 1}
	}
	latency := s.latency
	s.notify()
	s.mu.Unlock()
	if method == "sendMessage" || method == "editMessageText" {
		time.Sleep(latency)
	}
	if fail != nil {
		reply(w, nil, fail)
		return
	}
	f := r.PostForm
	switch method {
	case "getMe":
		reply(w, Bot, nil)
	case "sendMessage":
		res, fail := s.sendMessage(f)
		reply(w, res, fail)
	case "editMessageText":
		res, fail := s.editMessageText(f)
		reply(w, res, fail)
	case "answerCallbackQuery":
		reply(w, true, s.answerCallback(f))
	case "setWebhook":
		s.mu.Lock()
		s.webhook = webhook{URL: f.Get("url"), Secret: f.Get("secret_token"), AllowedUpdates: f.Get("allowed_updates")}
		s.notify()
		s.mu.Unlock()
		reply(w, true, nil)
	case "deleteWebhook":
		s.mu.Lock()
		s.webhook = webhook{}
		s.mu.Unlock()
		reply(w, true, nil)
	case "getUpdates":
		s.getUpdates(w, r, f)
	default:
		reply(w, nil, &Failure{Code: 404, Description: "Not Found: method not found"})
	}
}

func reply(w http.ResponseWriter, result any, f *Failure) {
	w.Header().Set("Content-Type", "application/json")
	if f != nil {
		body := map[string]any{"ok": false, "error_code": f.Code, "description": f.Description}
		params := map[string]any{}
		if f.RetryAfter > 0 {
			params["retry_after"] = f.RetryAfter
		}
		if f.MigrateTo != 0 {
			params["migrate_to_chat_id"] = f.MigrateTo
		}
		if len(params) > 0 {
			body["parameters"] = params
		}
		w.WriteHeader(f.Code)
		json.NewEncoder(w).Encode(body)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
}

func badRequest(desc string) *Failure {
	return &Failure{Code: 400, Description: "Bad Request: " + desc}
}

// parseText checks and converts a message text as Telegram would.
func parseText(f url.Values) (plain string, entities []tgbotapi.MessageEntity, fail *Failure) {
	text := f.Get("text")
	plain = text
	if f.Get("parse_mode") == tgbotapi.ModeHTML {
		p, e, err := Parse(text)
		if err != nil {
			return "", nil, &Failure{Code: 400, Description: err.Error()}
		}
		plain, entities = p, e
	}
	switch n := utf16Len(plain); {
	case strings.TrimSpace(plain) == "":
		return "", nil, badRequest("message text is empty")
	case n > 4096:
		return "", nil, badRequest("message is too long")
	}
	return plain, entities, nil
}

// parseMarkup reads reply_markup: an inline keyboard or a force reply.
func parseMarkup(raw string) (kb [][]Button, fr *tgbotapi.ForceReply, fail *Failure) {
	if raw == "" {
		return nil, nil, nil
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &probe); err != nil {
		return nil, nil, badRequest("can't parse reply keyboard markup JSON object")
	}
	if _, ok := probe["force_reply"]; ok {
		var f tgbotapi.ForceReply
		if err := json.Unmarshal([]byte(raw), &f); err != nil || !f.ForceReply {
			return nil, nil, badRequest("can't parse reply keyboard markup JSON object")
		}
		if n := utf16Len(f.InputFieldPlaceholder); n > 64 {
			return nil, nil, badRequest("input field placeholder is too long")
		}
		return nil, &f, nil
	}
	var mk tgbotapi.InlineKeyboardMarkup
	if err := json.Unmarshal([]byte(raw), &mk); err != nil {
		return nil, nil, badRequest("can't parse inline keyboard markup")
	}
	kb = [][]Button{}
	for _, row := range mk.InlineKeyboard {
		var r []Button
		for _, b := range row {
			if b.CallbackData == nil || len(*b.CallbackData) < 1 || len(*b.CallbackData) > 64 {
				return nil, nil, badRequest("BUTTON_DATA_INVALID")
			}
			if strings.TrimSpace(b.Text) == "" {
				return nil, nil, badRequest("text buttons are unallowed in the inline keyboard")
			}
			r = append(r, Button{Text: b.Text, Data: *b.CallbackData})
		}
		kb = append(kb, r)
	}
	return kb, nil, nil
}

func (s *Server) sendMessage(f url.Values) (any, *Failure) {
	chat, err := strconv.ParseInt(f.Get("chat_id"), 10, 64)
	if err != nil || chat == 0 {
		return nil, badRequest("chat not found")
	}
	plain, entities, fail := parseText(f)
	if fail != nil {
		return nil, fail
	}
	kb, fr, fail := parseMarkup(f.Get("reply_markup"))
	if fail != nil {
		return nil, fail
	}
	replyTo, _ := strconv.Atoi(f.Get("reply_to_message_id"))
	thread, err := strconv.Atoi(f.Get("message_thread_id"))
	if f.Has("message_thread_id") && (err != nil || thread <= 0) {
		return nil, badRequest("message thread not found")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	replied := s.find(chat, replyTo)
	if replyTo != 0 && replied == nil && f.Get("allow_sending_without_reply") != "true" {
		return nil, badRequest("replied message not found")
	}
	thread, fail = s.placeIn(chat, thread, replied)
	if fail != nil {
		return nil, fail
	}
	s.nextMsg++
	m := &Message{ChatID: chat, ID: s.nextMsg, HTML: f.Get("text"), Text: plain, Entities: entities, ParseMode: f.Get("parse_mode"),
		Keyboard: kb, ForceReply: fr, ReplyTo: replyTo, Thread: thread, Date: s.now().Unix(), Keyboarded: len(kb) > 0}
	s.msgs[chat] = append(s.msgs[chat], m)
	s.notify()
	return s.wireMessage(m), nil
}

func (s *Server) editMessageText(f url.Values) (any, *Failure) {
	chat, _ := strconv.ParseInt(f.Get("chat_id"), 10, 64)
	id, _ := strconv.Atoi(f.Get("message_id"))
	plain, entities, fail := parseText(f)
	if fail != nil {
		return nil, fail
	}
	kb, fr, fail := parseMarkup(f.Get("reply_markup"))
	if fail != nil {
		return nil, fail
	}
	if fr != nil {
		return nil, badRequest("inline keyboard expected")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.find(chat, id)
	if m == nil {
		return nil, badRequest("message to edit not found")
	}
	if len(kb) == 0 {
		kb = nil // an edit without a keyboard, or with no rows, removes it
	}
	if m.HTML == f.Get("text") && m.ParseMode == f.Get("parse_mode") && equalKeyboards(m.Keyboard, kb) {
		return nil, badRequest("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
	}
	m.HTML, m.Text, m.Entities, m.ParseMode, m.Keyboard = f.Get("text"), plain, entities, f.Get("parse_mode"), kb
	m.Edits++
	s.notify()
	return s.wireMessage(m), nil
}

func equalKeyboards(a, b [][]Button) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func (s *Server) answerCallback(f url.Values) *Failure {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queries[f.Get("callback_query_id")]
	if q == nil || q.answered {
		return badRequest("query is too old and response timeout expired or query ID is invalid")
	}
	if utf16Len(f.Get("text")) > 200 {
		return badRequest("MESSAGE_TOO_LONG")
	}
	q.answered, q.text = true, f.Get("text")
	close(q.done)
	s.notify()
	return nil
}

// wireMessage is m as the Bot API returns it (and as a reply quotes it);
// call with mu held.
func (s *Server) wireMessage(m *Message) map[string]any {
	out := map[string]any{
		"message_id": m.ID,
		"from":       Bot,
		"chat":       s.wireChat(m.ChatID),
		"date":       m.Date,
		"text":       m.Text,
	}
	if m.Thread != 0 {
		out["message_thread_id"], out["is_topic_message"] = m.Thread, true
	}
	if len(m.Entities) > 0 {
		out["entities"] = m.Entities
	}
	if m.Keyboard != nil {
		rows := [][]map[string]string{}
		for _, row := range m.Keyboard {
			r := []map[string]string{}
			for _, b := range row {
				r = append(r, map[string]string{"text": b.Text, "callback_data": b.Data})
			}
			rows = append(rows, r)
		}
		out["reply_markup"] = map[string]any{"inline_keyboard": rows}
	}
	return out
}

// wireChat is chat id as the Bot API shows it; call with mu held.
func (s *Server) wireChat(id int64) map[string]any {
	if id < 0 {
		c := map[string]any{"id": id, "type": "supergroup", "title": "askbridge ops"}
		if s.forums[id] != nil {
			c["is_forum"] = true
		}
		return c
	}
	return map[string]any{"id": id, "type": "private", "first_name": "Ops"}
}

func wireUser(u tgbotapi.User) map[string]any {
	out := map[string]any{"id": u.ID, "is_bot": u.IsBot, "first_name": u.FirstName}
	if u.LastName != "" {
		out["last_name"] = u.LastName
	}
	if u.UserName != "" {
		out["username"] = u.UserName
	}
	return out
}

// fixture loads one of the upstream update payloads as a template.
func fixture(name string) map[string]any {
	raw, err := fixtures.ReadFile("fixtures/" + name)
	if err != nil {
		panic(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		panic(err)
	}
	return m
}

// Package telegramfake is a local stand-in for the Telegram Bot API, driven
// by the real go-telegram-bot-api client. It keeps the messages the bot
// sent and edited, checks what Telegram checks (HTML entities, the
// 4096-character text limit, 1-64 byte callback_data, one answer per
// callback query, "message is not modified"), and injects clicks and
// replies shaped like real updates (the fixtures beside it), either by
// POSTing them to the registered webhook with its secret token or by
// queueing them for getUpdates.
package telegramfake

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/internal/changes"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

//go:embed fixtures/*.json
var fixtures embed.FS

// Bot is the fake bot's own user, as getMe returns it.
var Bot = tgbotapi.User{ID: 1861977284, IsBot: true, FirstName: "askbridge", UserName: "askbridge_test_bot"}

// Button is one inline keyboard button.
type Button struct {
	Text string
	Data string
}

// Message is a message the bot sent, as it now stands.
type Message struct {
	ChatID     int64
	ID         int
	HTML       string // the text as sent (parse_mode HTML)
	Text       string // the text as Telegram shows it
	Entities   []tgbotapi.MessageEntity
	ParseMode  string
	Keyboard   [][]Button // nil: none
	ForceReply *tgbotapi.ForceReply
	ReplyTo    int
	Edits      int
	Date       int64
	// Keyboarded is true when the message was sent with an inline
	// keyboard (a card), even if an edit removed it since.
	Keyboarded bool
}

// Buttons lists the keyboard's buttons row by row.
func (m Message) Buttons() []Button {
	var out []Button
	for _, row := range m.Keyboard {
		out = append(out, row...)
	}
	return out
}

// Call is one Bot API request as received.
type Call struct {
	Method string
	Form   url.Values
}

// Failure is an error the fake answers instead of doing a call.
type Failure struct {
	Code        int
	Description string
	RetryAfter  int
}

// Server is the fake Bot API.
type Server struct {
	Token string
	srv   *httptest.Server

	mu        sync.Mutex
	changes   changes.Signal // notified on every change
	calls     []Call
	msgs      map[int64][]*Message
	nextMsg   int
	failures  map[string][]Failure
	queries   map[string]*query
	nextQuery int
	nextUpd   int
	queue     []json.RawMessage // updates not yet confirmed by getUpdates
	queueIDs  []int
	polling   chan struct{} // closed to end the getUpdates in flight with 409
	webhook   webhook
	target    string // where webhook updates are POSTed; defaults to webhook.URL
	now       func() time.Time
	latency   time.Duration       // before answering sendMessage and editMessageText
	limited   bool                // answer 429 past Telegram's send limits (Limit)
	lastSent  map[int64]time.Time // per chat, the last message accepted
	sentAt    []time.Time         // every message accepted, while limited
	tooMany   int                 // 429s answered
}

type webhook struct {
	URL, Secret    string
	AllowedUpdates string
}

type query struct {
	answered bool
	text     string
	done     chan struct{}
}

// Start runs a fake for token until the test ends.
func Start(t testing.TB, token string) *Server {
	s := &Server{
		Token:    token,
		msgs:     map[int64][]*Message{},
		nextMsg:  4071,
		failures: map[string][]Failure{},
		queries:  map[string]*query{},
		nextUpd:  226394498,
		now:      time.Now,
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// Endpoint is the tgbotapi endpoint format for this fake.
func (s *Server) Endpoint() string { return s.srv.URL + "/bot%s/%s" }

// URL is the fake's base URL.
func (s *Server) URL() string { return s.srv.URL }

// SetWebhookTarget makes webhook deliveries go to u (the program's real
// listener) whatever public URL was registered.
func (s *Server) SetWebhookTarget(u string) {
	s.mu.Lock()
	s.target = u
	s.mu.Unlock()
}

// Webhook returns what setWebhook registered.
func (s *Server) Webhook() (u, secret, allowed string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.webhook.URL, s.webhook.Secret, s.webhook.AllowedUpdates
}

// FailNext makes the next call of method fail with f (queued, in order).
func (s *Server) FailNext(method string, f Failure) {
	s.mu.Lock()
	s.failures[method] = append(s.failures[method], f)
	s.mu.Unlock()
}

// Calls returns every request so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Messages returns copies of the bot's messages in chat, oldest first.
func (s *Server) Messages(chat int64) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, 0, len(s.msgs[chat]))
	for _, m := range s.msgs[chat] {
		out = append(out, *m)
	}
	return out
}

// Message returns one message.
func (s *Server) Message(chat int64, id int) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.find(chat, id); m != nil {
		return *m, true
	}
	return Message{}, false
}

// Wait blocks until cond holds or the timeout passes; it reports whether
// cond held. cond is checked after every change to the fake, and every
// 20ms for conditions that also read other state.
func (s *Server) Wait(timeout time.Duration, cond func() bool) bool {
	return s.changes.Wait(timeout, 20*time.Millisecond, cond)
}

// notify wakes Wait; call with mu held.
func (s *Server) notify() { s.changes.Notify() }

func (s *Server) find(chat int64, id int) *Message {
	for _, m := range s.msgs[chat] {
		if m.ID == id {
			return m
		}
	}
	return nil
}

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
		if f.RetryAfter > 0 {
			body["parameters"] = map[string]any{"retry_after": f.RetryAfter}
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if replyTo != 0 && s.find(chat, replyTo) == nil && f.Get("allow_sending_without_reply") != "true" {
		return nil, badRequest("replied message not found")
	}
	s.nextMsg++
	m := &Message{ChatID: chat, ID: s.nextMsg, HTML: f.Get("text"), Text: plain, Entities: entities, ParseMode: f.Get("parse_mode"),
		Keyboard: kb, ForceReply: fr, ReplyTo: replyTo, Date: s.now().Unix(), Keyboarded: len(kb) > 0}
	s.msgs[chat] = append(s.msgs[chat], m)
	s.notify()
	return wireMessage(m), nil
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
	return wireMessage(m), nil
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

// wireMessage is m as the Bot API returns it (and as a reply quotes it).
func wireMessage(m *Message) map[string]any {
	out := map[string]any{
		"message_id": m.ID,
		"from":       Bot,
		"chat":       wireChat(m.ChatID),
		"date":       m.Date,
		"text":       m.Text,
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

func wireChat(id int64) map[string]any {
	if id < 0 {
		return map[string]any{"id": id, "type": "supergroup", "title": "askbridge ops"}
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
	cq["message"] = wireMessage(m)
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
	msg["chat"] = wireChat(chat)
	msg["date"] = s.now().Unix()
	msg["text"] = text
	delete(msg, "reply_to_message")
	if replyTo != 0 {
		m := s.find(chat, replyTo)
		if m == nil {
			return nil, fmt.Errorf("telegramfake: no message %d in chat %d", replyTo, chat)
		}
		msg["reply_to_message"] = wireMessage(m)
	}
	return u, nil
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

// Package telegramfake is a local stand-in for the Telegram Bot API, driven
// by the real go-telegram-bot-api client. It keeps the messages the bot
// sent and edited, checks what Telegram checks (HTML entities, the
// 4096-character text limit, 1-64 byte callback_data, one answer per
// callback query, "message is not modified", forum topics: topics.go), and
// injects clicks and replies shaped like real updates (the fixtures beside
// it), either by POSTing them to the registered webhook with its secret
// token or by queueing them for getUpdates.
package telegramfake

import (
	"embed"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
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
	// Thread is the forum topic the message is in (message_thread_id),
	// 0 for General or a chat that is no forum.
	Thread int
	Edits  int
	Date   int64
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
	// MigrateTo is parameters.migrate_to_chat_id: the supergroup a group
	// was upgraded to.
	MigrateTo int64
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
	forums    map[int64]*forum    // chats with topics (topics.go)
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

// Package slackfake is a local stand-in for Slack's Web API and Socket Mode,
// for tests that run the real slack-go SDK against it. It is built on the
// SDK's own slacktest server, with the methods askbridge uses bound to
// handlers that keep the workspace's messages: posts get unique ts values,
// chat.update edits (and, as Slack does, keeps blocks it is not sent),
// conversations.replies reads threads back, and users and user groups are
// whatever the test sets up.
//
// Inbound traffic is built from real payloads (fixtures/, see SOURCES.md):
// clicks from a block_actions payload, thread replies from an Events API
// message callback. The test sends them either over a Socket Mode
// websocket (envelopes the client must acknowledge) or as signed HTTP
// requests to the adapter's endpoints.
package slackfake

import (
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/internal/changes"
	"github.com/gorilla/websocket"
	"github.com/slack-go/slack/slacktest"
)

//go:embed fixtures/*.json
var fixtures embed.FS

func fixture(name string) []byte {
	b, err := fixtures.ReadFile("fixtures/" + name)
	if err != nil {
		panic("slackfake: missing fixture " + name)
	}
	return b
}

// Identities of the fake workspace's bot.
const (
	BotUserID = "UBOT0ASK"
	BotID     = "BBOT0ASK"
	TeamID    = "T111"
)

// Message is a message in the fake workspace.
type Message struct {
	Channel   string
	TS        string
	ThreadTS  string // set on thread replies
	Text      string
	User      string
	BotID     string          // set on the bot's posts
	Blocks    json.RawMessage // as last posted or edited; nil for none
	Broadcast bool            // a thread reply also sent to the channel
	Edits     int
}

// Ephemeral is a message only one person saw.
type Ephemeral struct {
	Channel, User, ThreadTS, Text string
	Blocks                        json.RawMessage
}

// User is a person of the fake workspace.
type User struct {
	ID, Name string
}

// Failure is what the next call of a method answers instead of success:
// a 429 with Retry-After when RetryAfter is set, else {"ok":false} with
// Error.
type Failure struct {
	RetryAfter int // seconds
	Error      string
}

// Fake is the fake Slack. Its methods are safe for concurrent use.
type Fake struct {
	srv *slacktest.Server

	mu         sync.Mutex
	changes    changes.Signal // notified on every change
	base, seq  int64
	messages   []*Message
	ephemerals []Ephemeral
	calls      map[string]int
	users      map[string]User
	groups     map[string][]string
	fail       map[string][]Failure
	chanErr    map[string]string
	conns      map[*sockConn]bool
	acks       map[string]bool
	envelopes  int
	events     int
	pingEvery  time.Duration
	latency    map[string]time.Duration
	held       map[string]chan struct{} // closed when the method is let go
	triggers   map[string]string        // trigger id → the user whose click issued it
	views      []View
}

// New starts a fake Slack on 127.0.0.1. Close stops it.
func New() *Fake {
	f := &Fake{
		base:      time.Now().Unix(),
		calls:     map[string]int{},
		users:     map[string]User{},
		groups:    map[string][]string{},
		fail:      map[string][]Failure{},
		chanErr:   map[string]string{},
		conns:     map[*sockConn]bool{},
		acks:      map[string]bool{},
		pingEvery: 200 * time.Millisecond,
	}
	bind := func(method string, h func(url.Values) any) slacktest.Binder {
		return func(c slacktest.Customize) { c.Handle("/"+method, f.method(method, h)) }
	}
	f.srv = slacktest.NewTestServer(
		bind("auth.test", f.authTest),
		bind("chat.postMessage", f.postMessage),
		bind("chat.update", f.update),
		bind("chat.postEphemeral", f.postEphemeral),
		bind("conversations.replies", f.replies),
		bind("usergroups.users.list", f.groupMembers),
		bind("users.info", f.userInfo),
		func(c slacktest.Customize) { c.Handle("/views.open", f.viewsOpen) },
		func(c slacktest.Customize) { c.Handle("/apps.connections.open", f.connectionsOpen) },
		func(c slacktest.Customize) { c.Handle("/link", f.socket) },
	)
	f.srv.Start()
	return f
}

// Close stops the server and drops every Socket Mode connection.
func (f *Fake) Close() {
	f.mu.Lock()
	conns := make([]*sockConn, 0, len(f.conns))
	for c := range f.conns {
		conns = append(conns, c)
	}
	f.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
	f.srv.Stop()
}

// APIURL is the Web API base URL, with the trailing slash the SDK needs.
func (f *Fake) APIURL() string { return f.srv.GetAPIURL() }

// AddUser adds a person whose users.info answers with name.
func (f *Fake) AddUser(u User) {
	f.mu.Lock()
	f.users[u.ID] = u
	f.mu.Unlock()
}

// SetGroup sets a user group's members (usergroups.users.list).
func (f *Fake) SetGroup(id string, members ...string) {
	f.mu.Lock()
	f.groups[id] = append([]string(nil), members...)
	f.mu.Unlock()
}

// FailNext makes the next call of method fail as fl says.
func (f *Fake) FailNext(method string, fl Failure) {
	f.mu.Lock()
	f.fail[method] = append(f.fail[method], fl)
	f.mu.Unlock()
}

// SetChannelError makes every post to channel fail with code
// (channel_not_found, is_archived, …); "" clears it.
func (f *Fake) SetChannelError(channel, code string) {
	f.mu.Lock()
	if code == "" {
		delete(f.chanErr, channel)
	} else {
		f.chanErr[channel] = code
	}
	f.mu.Unlock()
}

// SetLatency makes every call of method take d before it answers, as a
// busy platform does.
func (f *Fake) SetLatency(method string, d time.Duration) {
	f.mu.Lock()
	if f.latency == nil {
		f.latency = map[string]time.Duration{}
	}
	f.latency[method] = d
	f.mu.Unlock()
}

// Hold makes every call of method wait, unanswered, until the returned
// func is called (Slack slow to answer, for as long as a test needs).
func (f *Fake) Hold(method string) (release func()) {
	ch := make(chan struct{})
	f.mu.Lock()
	if f.held == nil {
		f.held = map[string]chan struct{}{}
	}
	f.held[method] = ch
	f.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			delete(f.held, method)
			f.mu.Unlock()
			close(ch)
		})
	}
}

// Calls is how many times method was called.
func (f *Fake) Calls(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

// Messages returns a copy of every message, in the order posted.
func (f *Fake) Messages() []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Message, len(f.messages))
	for i, m := range f.messages {
		out[i] = *m
	}
	return out
}

// Message returns the message at channel and ts.
func (f *Fake) Message(channel, ts string) (Message, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m := f.find(channel, ts); m != nil {
		return *m, true
	}
	return Message{}, false
}

// Ephemerals returns a copy of every private message.
func (f *Fake) Ephemerals() []Ephemeral {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Ephemeral(nil), f.ephemerals...)
}

// WaitFor waits until cond holds, re-checking after every change of the
// fake (and every 20ms, for conditions that also read other state), and
// reports whether it did within timeout.
func (f *Fake) WaitFor(timeout time.Duration, cond func() bool) bool {
	return f.changes.Wait(timeout, 20*time.Millisecond, cond)
}

// notify wakes WaitFor; called with f.mu held.
func (f *Fake) notify() { f.changes.Notify() }

// nextTS mints a ts unique within the fake ("<seconds>.<6 digits>"), so
// two posts in one second never share one. Called with f.mu held.
func (f *Fake) nextTS() string {
	f.seq++
	return fmt.Sprintf("%d.%06d", f.base+f.seq/1000000, f.seq%1000000)
}

func (f *Fake) find(channel, ts string) *Message {
	for _, m := range f.messages {
		if m.Channel == channel && m.TS == ts {
			return m
		}
	}
	return nil
}

// AddReply records a person's reply in a thread, as Slack would keep it,
// and returns it; ReplyEvent then builds the event Slack sends for it.
func (f *Fake) AddReply(channel, threadTS, user, text string) Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := &Message{Channel: channel, TS: f.nextTS(), ThreadTS: threadTS, Text: text, User: user}
	f.messages = append(f.messages, m)
	f.notify()
	return *m
}

// apiError is Slack's failure body.
type apiError struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

// method wraps a Web API handler: it counts the call, reads the form,
// applies queued failures and writes the JSON answer.
func (f *Fake) method(name string, h func(url.Values) any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, err := url.ParseQuery(string(body))
		if err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.calls[name]++
		delay, held := f.latency[name], f.held[name]
		var fl *Failure
		if q := f.fail[name]; len(q) > 0 {
			fl = &q[0]
			f.fail[name] = q[1:]
		}
		f.mu.Unlock()
		if held != nil {
			select {
			case <-held:
			case <-r.Context().Done():
				return
			}
		}
		time.Sleep(delay)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case fl != nil && fl.RetryAfter > 0:
			w.Header().Set("Retry-After", fmt.Sprint(fl.RetryAfter))
			w.WriteHeader(http.StatusTooManyRequests)
			_ = json.NewEncoder(w).Encode(apiError{Error: "ratelimited"})
			return
		case fl != nil:
			_ = json.NewEncoder(w).Encode(apiError{Error: fl.Error})
			return
		case form.Get("token") == "":
			_ = json.NewEncoder(w).Encode(apiError{Error: "not_authed"})
			return
		}
		_ = json.NewEncoder(w).Encode(h(form))
	}
}

func (f *Fake) authTest(url.Values) any {
	return map[string]any{"ok": true, "url": "https://fake.slack.test/", "team": "Fake", "user": "askbridge",
		"team_id": TeamID, "user_id": BotUserID, "bot_id": BotID}
}

func (f *Fake) postMessage(v url.Values) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := v.Get("channel")
	if code := f.chanErr[ch]; code != "" {
		return apiError{Error: code}
	}
	if ch == "" {
		return apiError{Error: "channel_not_found"}
	}
	if strings.HasPrefix(ch, "U") || strings.HasPrefix(ch, "W") {
		ch = "D" + ch[1:] // a post to a person lands in their DM
	}
	m := &Message{Channel: ch, TS: f.nextTS(), ThreadTS: v.Get("thread_ts"), Text: v.Get("text"),
		User: BotUserID, BotID: BotID, Broadcast: v.Get("reply_broadcast") == "true"}
	if b := v.Get("blocks"); b != "" {
		m.Blocks = json.RawMessage(b)
	}
	f.messages = append(f.messages, m)
	f.notify()
	return map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS, "message": wireMessage(m)}
}

func (f *Fake) update(v url.Values) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := v.Get("channel")
	if code := f.chanErr[ch]; code != "" {
		return apiError{Error: code}
	}
	m := f.find(ch, v.Get("ts"))
	if m == nil {
		return apiError{Error: "message_not_found"}
	}
	if m.BotID != BotID {
		return apiError{Error: "cant_update_message"}
	}
	if v.Has("text") {
		m.Text = v.Get("text")
	}
	if v.Has("blocks") { // omitted blocks are kept, as Slack does
		m.Blocks = json.RawMessage(v.Get("blocks"))
	}
	m.Edits++
	f.notify()
	return map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS, "text": m.Text}
}

func (f *Fake) postEphemeral(v url.Values) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := v.Get("channel")
	if code := f.chanErr[ch]; code != "" {
		return apiError{Error: code}
	}
	if v.Get("user") == "" {
		return apiError{Error: "user_not_in_channel"}
	}
	e := Ephemeral{Channel: ch, User: v.Get("user"), ThreadTS: v.Get("thread_ts"), Text: v.Get("text")}
	if b := v.Get("blocks"); b != "" {
		e.Blocks = json.RawMessage(b)
	}
	f.ephemerals = append(f.ephemerals, e)
	f.notify()
	return map[string]any{"ok": true, "message_ts": f.nextTS()}
}

func (f *Fake) replies(v url.Values) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, ts := v.Get("channel"), v.Get("ts")
	root := f.find(ch, ts)
	if root == nil {
		return apiError{Error: "thread_not_found"}
	}
	msgs := []any{wireMessage(root)}
	if root.ThreadTS == "" {
		for _, m := range f.messages {
			if m.Channel == ch && m.ThreadTS == ts {
				msgs = append(msgs, wireMessage(m))
			}
		}
	}
	var limit int
	if _, err := fmt.Sscan(v.Get("limit"), &limit); err == nil && limit > 0 && limit < len(msgs) {
		msgs = msgs[:limit]
	}
	return map[string]any{"ok": true, "messages": msgs, "has_more": false}
}

func (f *Fake) groupMembers(v url.Values) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	members, ok := f.groups[v.Get("usergroup")]
	if !ok {
		return apiError{Error: "no_such_subteam"}
	}
	return map[string]any{"ok": true, "users": members}
}

func (f *Fake) userInfo(v url.Values) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, ok := f.users[v.Get("user")]
	if !ok {
		return apiError{Error: "user_not_found"}
	}
	return map[string]any{"ok": true, "user": map[string]any{
		"id": u.ID, "team_id": TeamID, "name": strings.ToLower(strings.ReplaceAll(u.Name, " ", ".")), "real_name": u.Name,
		"profile": map[string]any{"real_name": u.Name, "display_name": u.Name},
	}}
}

// wireMessage is a message as conversations.replies and chat.postMessage
// show it.
func wireMessage(m *Message) map[string]any {
	out := map[string]any{"type": "message", "ts": m.TS, "text": m.Text, "user": m.User}
	if m.ThreadTS != "" {
		out["thread_ts"] = m.ThreadTS
	}
	if m.BotID != "" {
		out["bot_id"] = m.BotID
	}
	if len(m.Blocks) > 0 {
		out["blocks"] = m.Blocks
	}
	return out
}

// socket mode ---------------------------------------------------------------

func (f *Fake) connectionsOpen(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls["apps.connections.open"]++
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer xapp-") {
		_ = json.NewEncoder(w).Encode(apiError{Error: "invalid_auth"})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "url": "ws://" + r.Host + "/link"})
}

// sockConn is one Socket Mode connection; writes are serialised.
type sockConn struct {
	mu   sync.Mutex
	ws   *websocket.Conn
	done chan struct{}
	once sync.Once
}

func (c *sockConn) write(b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

func (c *sockConn) close() {
	c.once.Do(func() {
		close(c.done)
		_ = c.ws.Close()
	})
}

var upgrader = websocket.Upgrader{
	// The SDK dials with Origin https://api.slack.com.
	CheckOrigin: func(*http.Request) bool { return true },
}

// socket serves one Socket Mode connection: hello first, then pings (the
// client drops a connection that Slack stops pinging), and every frame the
// client sends is read as an acknowledgement.
func (f *Fake) socket(w http.ResponseWriter, r *http.Request) {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &sockConn{ws: ws, done: make(chan struct{})}
	defer c.close()
	if err := c.write(fixture("slack-socketmode-hello.json")); err != nil {
		return
	}
	f.mu.Lock()
	f.conns[c] = true
	every := f.pingEvery
	f.notify()
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.conns, c)
		f.notify()
		f.mu.Unlock()
	}()
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(time.Second)) != nil {
				return
			}
			select {
			case <-c.done:
				return
			case <-t.C:
			}
		}
	}()
	for {
		_, b, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var ack struct {
			EnvelopeID string `json:"envelope_id"`
		}
		if json.Unmarshal(b, &ack) == nil && ack.EnvelopeID != "" {
			f.mu.Lock()
			f.acks[ack.EnvelopeID] = true
			f.notify()
			f.mu.Unlock()
		}
	}
}

// Connections is how many Socket Mode connections are open.
func (f *Fake) Connections() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.conns)
}

// Acked reports whether the client acknowledged the envelope.
func (f *Fake) Acked(envelopeID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.acks[envelopeID]
}

// SendEnvelope sends payload over a Socket Mode connection in an envelope
// of the given type ("events_api" or "interactive"), shaped like the
// fixture envelope, and returns its envelope id. It waits up to timeout
// for a connection.
func (f *Fake) SendEnvelope(typ string, payload []byte, timeout time.Duration) (string, error) {
	var c *sockConn
	f.WaitFor(timeout, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		for k := range f.conns {
			c = k
			return true
		}
		return false
	})
	if c == nil {
		return "", fmt.Errorf("slackfake: no socket mode connection within %s", timeout)
	}
	var env map[string]any
	if err := json.Unmarshal(fixture("slack-socketmode-events-api-envelope.json"), &env); err != nil {
		return "", err
	}
	f.mu.Lock()
	f.envelopes++
	id := fmt.Sprintf("env-%d-%d", f.base, f.envelopes)
	f.mu.Unlock()
	env["envelope_id"] = id
	env["type"] = typ
	env["payload"] = json.RawMessage(payload)
	b, err := json.Marshal(env)
	if err != nil {
		return "", err
	}
	return id, c.write(b)
}

// Disconnect asks every Socket Mode client to reconnect, with Slack's
// disconnect message.
func (f *Fake) Disconnect() {
	f.mu.Lock()
	conns := make([]*sockConn, 0, len(f.conns))
	for c := range f.conns {
		conns = append(conns, c)
	}
	f.mu.Unlock()
	for _, c := range conns {
		_ = c.write(fixture("slack-socketmode-disconnect.json"))
	}
}

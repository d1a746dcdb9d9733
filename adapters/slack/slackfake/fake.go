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
	"net/url"
	"sync"
	"time"

	"github.com/askbridge/askbridge/internal/changes"
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
	File      string          // the name of a file shared with the message, if any
	Edits     int
	EditedTS  string // when a person's reply was last edited (EditReply)
}

// Ephemeral is a message only one person saw.
type Ephemeral struct {
	Channel, User, ThreadTS, Text string
	Blocks                        json.RawMessage
}

// User is a person of the fake workspace, or, with Team set, of another
// workspace, met in a channel shared with it (Slack Connect) or, with
// Enterprise set too, of the same Enterprise Grid organisation.
type User struct {
	ID, Name string
	Team     string // the user's workspace: "" is the fake's own, TeamID
	// Enterprise is the Enterprise Grid organisation the user's
	// workspace belongs to ("" for none). Slack then names it, not the
	// workspace, as a click's or a modal's user.team_id (its interaction
	// payloads' reference), and in users.info's enterprise_user; a
	// message event's user_team still names the workspace (the shared
	// thread-reply fixture: user_team T111, enterprise_id E111).
	Enterprise string
}

// team is u's workspace id.
func (u User) team() string {
	if u.Team == "" {
		return TeamID
	}
	return u.Team
}

// payloadTeam is the user.team_id of u's interaction payloads: their
// organisation's id in an Enterprise Grid, else their workspace's.
func (u User) payloadTeam() string {
	if u.Enterprise != "" {
		return u.Enterprise
	}
	return u.team()
}

// Failure is what the next call of a method answers instead of success:
// a 429 with Retry-After when RetryAfter is set, else Status (a 429
// with no Retry-After, a 503) when set, else {"ok":false} with Error.
type Failure struct {
	RetryAfter int // seconds
	Status     int
	Error      string
}

// Fake is the fake Slack. Its methods are safe for concurrent use.
type Fake struct {
	srv *slacktest.Server

	mu         sync.Mutex
	changes    changes.Signal // notified on every change
	base, seq  int64
	lastTS     int64 // the newest ts minted, in microseconds
	messages   []*Message
	ephemerals []Ephemeral
	calls      map[string]int
	users      map[string]User
	groups     map[string][]string
	fail       map[string][]Failure
	chanErr    map[string]string
	conns      map[*sockConn]bool
	acks       map[string]json.RawMessage // envelope id → the ack's payload (nil: none)
	envelopes  int
	events     int
	pingEvery  time.Duration
	latency    map[string]time.Duration
	held       map[string]chan struct{} // closed when the method is let go
	triggers   map[string]string        // trigger id → the user whose click issued it
	views      []View
	enterprise string // the organisation the fake workspace is in (SetEnterprise)
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
		acks:      map[string]json.RawMessage{},
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

// SetEnterprise puts the fake workspace in Enterprise Grid organisation
// id: auth.test names it as enterprise_id, as Slack's does for a
// workspace of an organisation.
func (f *Fake) SetEnterprise(id string) {
	f.mu.Lock()
	f.enterprise = id
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
// two posts in one second never share one. Like Slack's, it is the time
// the message was posted (to the microsecond, one later than the last
// when the clock has not moved on): the adapter reads a reply's ts as
// when it was written. Called with f.mu held.
func (f *Fake) nextTS() string {
	f.lastTS = max(time.Now().UnixMicro(), f.lastTS+1)
	return fmt.Sprintf("%d.%06d", f.lastTS/1000000, f.lastTS%1000000)
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

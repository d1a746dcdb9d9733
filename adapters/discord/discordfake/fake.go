// Package discordfake is a local stand-in for Discord's REST API and
// gateway, driven by the real discordgo SDK in tests. It keeps the
// messages a bot posts and edits, records interaction responses, and
// injects interactions the way Discord does: signed HTTP POSTs to an
// interactions endpoint, or INTERACTION_CREATE over the gateway. The
// interactions it sends are built from Discord's documented payloads (the
// fixtures beside this file), with only the ids and values changed.
package discordfake

import (
	"crypto/ed25519"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"

	"github.com/askbridge/askbridge/internal/changes"
)

//go:embed fixtures/discord-interaction-button.json
var buttonFixture []byte

//go:embed fixtures/discord-interaction-modal-submit.json
var modalFixture []byte

// APIVersionPath is the path prefix the fake serves its REST API under.
const APIVersionPath = "/api/v10/"

// User is a person clicking on the fake platform.
type User struct {
	ID    string
	Name  string   // shown as the user's global name; "" sends none (null)
	Roles []string // the member's role ids in the guild
	// Username is the account's username; "" derives one from Name.
	Username string
	// Nick is the member's nickname in the guild; "" sends none (null).
	Nick string
	// DM sends the interaction as from a direct message: a user and no
	// member, so no roles.
	DM bool
}

// Message is a message as the fake holds it.
type Message struct {
	ID         string
	ChannelID  string
	Content    string
	Components json.RawMessage // as last set; null or [] when removed
	// Reference is the message this one replies to, if any.
	Reference string
	// Card is true when the message was posted with components: a
	// question's card, as opposed to a reminder or digest.
	Card  bool
	Edits int
}

// Button is one button of a message.
type Button struct {
	Label    string `json:"label"`
	Style    int    `json:"style"`
	CustomID string `json:"custom_id"`
	Disabled bool   `json:"disabled"`
}

// Buttons lists the message's buttons, row by row.
func (m Message) Buttons() []Button {
	var rows []struct {
		Type       int               `json:"type"`
		Components []json.RawMessage `json:"components"`
	}
	_ = json.Unmarshal(m.Components, &rows)
	var out []Button
	for _, r := range rows {
		for _, c := range r.Components {
			var b struct {
				Button
				Type int `json:"type"`
			}
			if json.Unmarshal(c, &b) == nil && b.Type == 2 {
				out = append(out, b.Button)
			}
		}
	}
	return out
}

// Rows is how many action rows the message has.
func (m Message) Rows() int {
	var rows []json.RawMessage
	_ = json.Unmarshal(m.Components, &rows)
	return len(rows)
}

// Call is one REST request the bot made.
type Call struct {
	Method string
	Path   string // below the API base, e.g. "channels/1/messages"
	Body   json.RawMessage
}

// Response is one interaction response the fake received, over the
// callback endpoint or in an HTTP interaction's reply.
type Response struct {
	InteractionID string
	Type          int             `json:"type"`
	Data          json.RawMessage `json:"data"`
}

// Content is the response's data.content.
func (r Response) Content() string {
	var d struct {
		Content string `json:"content"`
	}
	_ = json.Unmarshal(r.Data, &d)
	return d.Content
}

// Flags is the response's data.flags (64 is ephemeral).
func (r Response) Flags() int {
	var d struct {
		Flags int `json:"flags"`
	}
	_ = json.Unmarshal(r.Data, &d)
	return d.Flags
}

// CustomID is a modal response's custom_id.
func (r Response) CustomID() string {
	var d struct {
		CustomID string `json:"custom_id"`
	}
	_ = json.Unmarshal(r.Data, &d)
	return d.CustomID
}

// InputIDs are the custom_ids of a modal response's text inputs, in
// order.
func (r Response) InputIDs() []string {
	var d struct {
		Components []struct {
			Components []struct {
				Type     int    `json:"type"`
				CustomID string `json:"custom_id"`
			} `json:"components"`
		} `json:"components"`
	}
	_ = json.Unmarshal(r.Data, &d)
	var out []string
	for _, row := range d.Components {
		for _, c := range row.Components {
			if c.Type == 4 {
				out = append(out, c.CustomID)
			}
		}
	}
	return out
}

// InputValues are the starting values of a modal response's text
// inputs, by custom_id.
func (r Response) InputValues() map[string]string {
	var d struct {
		Components []struct {
			Components []struct {
				Type     int    `json:"type"`
				CustomID string `json:"custom_id"`
				Value    string `json:"value"`
			} `json:"components"`
		} `json:"components"`
	}
	_ = json.Unmarshal(r.Data, &d)
	out := map[string]string{}
	for _, row := range d.Components {
		for _, c := range row.Components {
			if c.Type == 4 {
				out[c.CustomID] = c.Value
			}
		}
	}
	return out
}

// Response types the fake understands.
const (
	ResponsePong          = 1
	ResponseMessage       = 4
	ResponseDeferredEdit  = 6
	ResponseUpdateMessage = 7
	ResponseModal         = 9
	FlagEphemeral         = 64
)

// fault is an injected failure for the next matching request.
type fault struct {
	method, path string
	status       int
	body         string
	header       http.Header
}

// Server is the fake. Its zero value is not usable; call New.
type Server struct {
	// Token is the bot token the fake accepts ("Bot " + Token).
	Token string
	// AppID is the application id interactions carry.
	AppID string
	// GuildID is the guild interactions come from.
	GuildID string

	srv  *httptest.Server
	pub  ed25519.PublicKey
	priv ed25519.PrivateKey

	mu        sync.Mutex
	next      int64
	messages  []*Message
	byID      map[string]*Message
	calls     []Call
	responses []Response
	onMessage map[string]string // interaction id -> message id, for UPDATE_MESSAGE
	tokens    map[string]string // interaction id -> token
	faults    []fault
	changes   changes.Signal // notified on every change
	conns     []*gwConn
	identify  []json.RawMessage
	seq       int64
	// clock, once set (SetClock), keeps Discord's window on interaction
	// callbacks; dispatched is when each interaction was sent on it.
	clock      func() time.Time
	dispatched map[string]time.Time
	// refuse makes the gateway refuse new connections (Refuse); refused
	// counts those it refused.
	refuse  bool
	refused int
	// closeIdentify, when set (CloseNextIdentify), is the close frame
	// the next IDENTIFY or RESUME gets instead of READY.
	closeIdentify []byte
}

// ResponseWindow is how long Discord waits for an interaction's first
// response before it invalidates the token.
const ResponseWindow = 3 * time.Second

// SetClock makes the fake keep Discord's response window on now: an
// interaction is stamped when Dispatch sends it, and its callback later
// than ResponseWindow after that is refused with 10062 (Unknown
// interaction), as Discord refuses it. A test's own clock lets it stand
// for time spent without waiting for it; without one no window is kept,
// so a slow machine never fails a test that is not about time.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = now
	s.dispatched = map[string]time.Time{}
}

// New starts a fake on a local port. Close it when done.
func New() *Server {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	s := &Server{
		Token: "fake-bot-token-" + randHex(8), AppID: "290926444748734465", GuildID: "290926798626357999",
		pub: pub, priv: priv, next: 1_100_000_000_000_000_000,
		byID: map[string]*Message{}, onMessage: map[string]string{}, tokens: map[string]string{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/gw", s.serveGateway)
	mux.HandleFunc("/gw/", s.serveGateway)
	mux.HandleFunc(APIVersionPath, s.serveAPI)
	s.srv = httptest.NewServer(mux)
	return s
}

// Close stops the fake and drops gateway connections.
func (s *Server) Close() {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for _, c := range conns {
		c.ws.Close()
	}
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// APIURL is the REST base to configure the SDK with (DISCORD_API_URL).
func (s *Server) APIURL() string { return s.srv.URL + APIVersionPath }

// PublicKey is the key Discord would show in the developer portal, hex
// (DISCORD_PUBLIC_KEY).
func (s *Server) PublicKey() string { return hex.EncodeToString(s.pub) }

// Changed returns a channel that is closed at the next change (a message
// posted or edited, a response received, a gateway identify).
func (s *Server) Changed() <-chan struct{} { return s.changes.C() }

// WaitFor waits until cond holds, up to timeout; cond runs with no lock
// held and may call any method. cond may also depend on state outside the
// fake (what the bot recorded after a post), so it is re-checked on a short
// tick too.
func (s *Server) WaitFor(timeout time.Duration, cond func() bool) bool {
	return s.changes.Wait(timeout, 10*time.Millisecond, cond)
}

// notify wakes waiters; the caller holds s.mu.
func (s *Server) notify() { s.changes.Notify() }

// Messages returns copies of the messages in a channel, oldest first.
func (s *Server) Messages(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.messages {
		if m.ChannelID == channel {
			out = append(out, *m)
		}
	}
	return out
}

// Message returns a copy of one message.
func (s *Server) Message(id string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.byID[id]
	if !ok {
		return Message{}, false
	}
	return *m, true
}

// Calls returns the REST requests made so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Responses returns the interaction responses received for an interaction
// id ("" for all).
func (s *Server) Responses(interactionID string) []Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Response
	for _, r := range s.responses {
		if interactionID == "" || r.InteractionID == interactionID {
			out = append(out, r)
		}
	}
	return out
}

// Identified returns the identify payloads the gateway received.
func (s *Server) Identified() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]json.RawMessage(nil), s.identify...)
}

// Fail makes the next request with this method whose path (below the API
// base) contains path fail with status and body; header may be nil.
func (s *Server) Fail(method, path string, status int, body string, header http.Header) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, fault{method: method, path: path, status: status, body: body, header: header})
}

func (s *Server) snowflake() string {
	s.next++
	return strconv.FormatInt(s.next, 10)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, map[string]any{"code": code, "message": msg})
}

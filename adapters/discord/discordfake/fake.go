// Package discordfake is a local stand-in for Discord's REST API and
// gateway, driven by the real discordgo SDK in tests. It keeps the
// messages a bot posts and edits, records interaction responses, and
// injects interactions the way Discord does: signed HTTP POSTs to an
// interactions endpoint, or INTERACTION_CREATE over the gateway. The
// interactions it sends are built from Discord's documented payloads (the
// fixtures beside this file), with only the ids and values changed.
package discordfake

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/internal/changes"
	"github.com/gorilla/websocket"
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

// serveAPI is the REST API: gateway discovery, channel messages and
// interaction callbacks.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, APIVersionPath)
	body, _ := io.ReadAll(r.Body)
	if r.Header.Get("Authorization") != "Bot "+s.Token {
		apiError(w, http.StatusUnauthorized, 0, "401: Unauthorized")
		return
	}
	s.mu.Lock()
	s.calls = append(s.calls, Call{Method: r.Method, Path: path, Body: append(json.RawMessage(nil), body...)})
	for i, f := range s.faults {
		if f.method == r.Method && strings.Contains(path, f.path) {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
			s.mu.Unlock()
			for k, v := range f.header {
				w.Header()[k] = v
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(f.status)
			io.WriteString(w, f.body)
			return
		}
	}
	s.mu.Unlock()

	parts := strings.Split(path, "/")
	switch {
	case r.Method == http.MethodGet && (path == "gateway" || path == "gateway/bot"):
		writeJSON(w, http.StatusOK, map[string]any{"url": "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/gw", "shards": 1,
			"session_start_limit": map[string]int{"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}})
	case r.Method == http.MethodPost && len(parts) == 3 && parts[0] == "channels" && parts[2] == "messages":
		s.postMessage(w, parts[1], body)
	case r.Method == http.MethodPatch && len(parts) == 4 && parts[0] == "channels" && parts[2] == "messages":
		s.editMessage(w, parts[1], parts[3], body)
	case r.Method == http.MethodPost && len(parts) == 4 && parts[0] == "interactions" && parts[3] == "callback":
		s.callback(w, parts[1], parts[2], body)
	case r.Method == http.MethodPost && path == "users/@me/channels":
		s.openDM(w, body)
	default:
		apiError(w, http.StatusNotFound, 0, "404: Not Found")
	}
}

// openDM is "Create DM": the DM channel with a user, the same one each
// time, as Discord returns an existing DM rather than a new one.
func (s *Server) openDM(w http.ResponseWriter, body []byte) {
	var in struct {
		RecipientID string `json:"recipient_id"`
	}
	if err := json.Unmarshal(body, &in); err != nil || in.RecipientID == "" {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: recipient_id")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": DMChannel(in.RecipientID), "type": 1,
		"recipients": []map[string]any{{"id": in.RecipientID, "username": "user", "discriminator": "0"}}})
}

// DMChannel is the id of the fake's DM channel with a user.
func DMChannel(user string) string { return "dm-" + user }

func (s *Server) postMessage(w http.ResponseWriter, channel string, body []byte) {
	var in struct {
		Content    string          `json:"content"`
		Components json.RawMessage `json:"components"`
		Reference  *struct {
			MessageID string `json:"message_id"`
		} `json:"message_reference"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		apiError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return
	}
	if msg, ok := checkMessage(in.Content, in.Components); !ok {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: "+msg)
		return
	}
	s.mu.Lock()
	m := &Message{ID: s.snowflake(), ChannelID: channel, Content: in.Content, Components: in.Components}
	m.Card = len(m.Buttons()) > 0
	if in.Reference != nil {
		m.Reference = in.Reference.MessageID
	}
	s.messages = append(s.messages, m)
	s.byID[m.ID] = m
	out := s.messageJSON(m)
	s.notify()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) editMessage(w http.ResponseWriter, channel, id string, body []byte) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(body, &in); err != nil {
		apiError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.byID[id]
	if !ok || m.ChannelID != channel {
		apiError(w, http.StatusNotFound, 10008, "Unknown Message")
		return
	}
	content, comps := m.Content, m.Components
	if raw, ok := in["content"]; ok {
		_ = json.Unmarshal(raw, &content)
	}
	if raw, ok := in["components"]; ok {
		comps = raw
	}
	if msg, ok := checkMessage(content, comps); !ok {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body: "+msg)
		return
	}
	m.Content, m.Components = content, comps
	m.Edits++
	s.notify()
	writeJSON(w, http.StatusOK, s.messageJSON(m))
}

// checkMessage enforces the limits Discord refuses a message over.
func checkMessage(content string, comps json.RawMessage) (string, bool) {
	if n := len([]rune(content)); n > 2000 {
		return fmt.Sprintf("content is %d characters", n), false
	}
	var rows []struct {
		Components []struct {
			Type     int    `json:"type"`
			Label    string `json:"label"`
			CustomID string `json:"custom_id"`
		} `json:"components"`
	}
	_ = json.Unmarshal(comps, &rows)
	if len(rows) > 5 {
		return "more than 5 action rows", false
	}
	for _, r := range rows {
		if len(r.Components) > 5 || len(r.Components) == 0 {
			return "an action row holds 1 to 5 components", false
		}
		for _, c := range r.Components {
			if len([]rune(c.Label)) > 80 || len(c.CustomID) > 100 || (c.Type == 2 && c.CustomID == "") {
				return "a button breaks its limits", false
			}
		}
	}
	return "", true
}

// messageJSON is the message as Discord returns it; the caller holds s.mu.
func (s *Server) messageJSON(m *Message) map[string]any {
	comps := m.Components
	if len(comps) == 0 || string(comps) == "null" {
		comps = json.RawMessage("[]")
	}
	return map[string]any{
		"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "components": comps, "type": 0,
		"timestamp": "2021-05-19T02:12:51.710000+00:00", "tts": false, "pinned": false, "mention_everyone": false,
		"mentions": []any{}, "mention_roles": []any{}, "embeds": []any{}, "attachments": []any{}, "flags": 0,
		"author": map[string]any{"id": s.AppID, "username": "askbridge", "discriminator": "0000", "bot": true},
	}
}

// callback receives an interaction response over REST.
func (s *Server) callback(w http.ResponseWriter, id, token string, body []byte) {
	var resp Response
	if err := json.Unmarshal(body, &resp); err != nil {
		apiError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if want, ok := s.tokens[id]; !ok || want != token {
		apiError(w, http.StatusNotFound, 10062, "Unknown interaction")
		return
	}
	for _, r := range s.responses {
		if r.InteractionID == id {
			apiError(w, http.StatusBadRequest, 40060, "Interaction has already been acknowledged.")
			return
		}
	}
	resp.InteractionID = id
	s.applyLocked(resp)
	w.WriteHeader(http.StatusNoContent)
}

// applyLocked records a response and, for UPDATE_MESSAGE, edits the
// message the interaction was on; the caller holds s.mu.
func (s *Server) applyLocked(resp Response) {
	s.responses = append(s.responses, resp)
	if resp.Type == ResponseUpdateMessage {
		if m, ok := s.byID[s.onMessage[resp.InteractionID]]; ok {
			var d struct {
				Content    *string         `json:"content"`
				Components json.RawMessage `json:"components"`
			}
			_ = json.Unmarshal(resp.Data, &d)
			if d.Content != nil {
				m.Content = *d.Content
			}
			m.Components = d.Components // null or [] removes them, as on Discord
			m.Edits++
		}
	}
	s.notify()
}

// Interaction is an interaction the fake built, ready to send.
type Interaction struct {
	ID   string
	Body []byte
}

// Click builds a button click by u on a message, from Discord's
// documented button interaction.
func (s *Server) Click(u User, messageID, customID string) Interaction {
	var v map[string]any
	if err := json.Unmarshal(buttonFixture, &v); err != nil {
		panic(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.byID[messageID]
	id, token := s.snowflake(), "tok-"+randHex(16)
	s.tokens[id], s.onMessage[id] = token, messageID
	v["id"], v["token"], v["application_id"], v["guild_id"] = id, token, s.AppID, s.GuildID
	v["data"] = map[string]any{"custom_id": customID, "component_type": 2}
	if m != nil {
		v["channel_id"] = m.ChannelID
		v["message"] = s.messageJSON(m)
	}
	setUser(v, u)
	b, _ := json.Marshal(v)
	return Interaction{ID: id, Body: b}
}

// Submit builds a modal submit by u, as Discord sends it after the modal
// opened from a button on messageID: the modal's custom_id and the value
// of each text input (by its custom_id), in the legacy ActionsRow +
// TextInput shape.
func (s *Server) Submit(u User, messageID, customID string, values map[string]string) Interaction {
	var v map[string]any
	if err := json.Unmarshal(modalFixture, &v); err != nil {
		panic(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.byID[messageID]
	id, token := s.snowflake(), "tok-"+randHex(16)
	s.tokens[id], s.onMessage[id] = token, messageID
	v["id"], v["token"], v["application_id"], v["guild_id"] = id, token, s.AppID, s.GuildID
	var rows []any
	for k, val := range values {
		rows = append(rows, map[string]any{"type": 1, "components": []any{
			map[string]any{"type": 4, "custom_id": k, "value": val},
		}})
	}
	v["data"] = map[string]any{"custom_id": customID, "components": rows}
	if m != nil {
		v["channel_id"] = m.ChannelID
		v["message"] = s.messageJSON(m)
		if ch, ok := v["channel"].(map[string]any); ok {
			ch["id"] = m.ChannelID
		}
	}
	setUser(v, u)
	b, _ := json.Marshal(v)
	return Interaction{ID: id, Body: b}
}

// Raw registers a hand-made interaction body (for malformed or unusual
// payloads) under a fresh id and token, so its callback is accepted.
func (s *Server) Raw(body map[string]any) Interaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, token := s.snowflake(), "tok-"+randHex(16)
	s.tokens[id] = token
	body["id"], body["token"] = id, token
	b, _ := json.Marshal(body)
	return Interaction{ID: id, Body: b}
}

// setUser puts u in the payload: a guild member with roles, or in a DM a
// bare user.
func setUser(v map[string]any, u User) {
	username := u.Username
	if username == "" {
		username = strings.ToLower(strings.ReplaceAll(u.Name, " ", ""))
	}
	user := map[string]any{"id": u.ID, "username": username, "global_name": orNull(u.Name),
		"discriminator": "0", "public_flags": 0, "avatar": nil}
	if u.DM {
		delete(v, "member")
		delete(v, "guild_id")
		v["user"] = user
		return
	}
	roles := u.Roles
	if roles == nil {
		roles = []string{}
	}
	member, _ := v["member"].(map[string]any)
	if member == nil {
		member = map[string]any{}
	}
	member["user"], member["roles"], member["nick"] = user, roles, orNull(u.Nick)
	v["member"] = member
	delete(v, "user")
}

// orNull is s, or JSON null for "", as Discord sends a name not set.
func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Signing is how Post signs a request.
type Signing int

const (
	Signed         Signing = iota // signed now, correctly
	BadSignature                  // signed with another key
	StaleTimestamp                // signed correctly, ten minutes ago
	Unsigned                      // no signature headers at all
)

// Post sends an interaction to an HTTP interactions endpoint the way
// Discord does, and returns the HTTP status and, on 200, the response,
// which it records (and applies, for UPDATE_MESSAGE) like a callback.
func (s *Server) Post(endpoint string, in Interaction, how Signing) (int, *Response, error) {
	return s.PostWith(context.Background(), http.DefaultClient, endpoint, in, how)
}

// PostWith is Post through client, with ctx: a benchmark gives each
// clicking person a client of their own.
func (s *Server) PostWith(ctx context.Context, client *http.Client, endpoint string, in Interaction, how Signing) (int, *Response, error) {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	key := s.priv
	switch how {
	case StaleTimestamp:
		ts = strconv.FormatInt(time.Now().Add(-10*time.Minute).Unix(), 10)
	case BadSignature:
		_, other, _ := ed25519.GenerateKey(rand.Reader)
		key = other
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(in.Body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Discord-Interactions/1.0 (+https://discord.com)")
	if how != Unsigned {
		sig := ed25519.Sign(key, append([]byte(ts), in.Body...))
		req.Header.Set("X-Signature-Ed25519", hex.EncodeToString(sig))
		req.Header.Set("X-Signature-Timestamp", ts)
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return res.StatusCode, nil, nil
	}
	var resp Response
	if err := json.Unmarshal(body, &resp); err != nil {
		return res.StatusCode, nil, fmt.Errorf("interaction response is not JSON: %w: %s", err, body)
	}
	resp.InteractionID = in.ID
	s.mu.Lock()
	s.applyLocked(resp)
	s.mu.Unlock()
	return res.StatusCode, &resp, nil
}

// Dispatch sends an interaction as INTERACTION_CREATE to every connected
// gateway session. The bot answers through the callback endpoint.
func (s *Server) Dispatch(in Interaction) error {
	s.mu.Lock()
	conns := append([]*gwConn(nil), s.conns...)
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	if len(conns) == 0 {
		return errors.New("discordfake: no gateway session is connected")
	}
	frame, _ := json.Marshal(map[string]any{"op": 0, "s": seq, "t": "INTERACTION_CREATE", "d": json.RawMessage(in.Body)})
	var errs []error
	for _, c := range conns {
		errs = append(errs, c.write(frame))
	}
	return errors.Join(errs...)
}

// Connected is how many gateway sessions are ready.
func (s *Server) Connected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

type gwConn struct {
	mu sync.Mutex
	ws *websocket.Conn
}

func (c *gwConn) write(b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// serveGateway runs one gateway session: HELLO, IDENTIFY, READY, then
// heartbeat ACKs until the client goes.
func (s *Server) serveGateway(w http.ResponseWriter, r *http.Request) {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &gwConn{ws: ws}
	defer ws.Close()
	if c.write([]byte(`{"op":10,"d":{"heartbeat_interval":41250}}`)) != nil {
		return
	}
	var first struct {
		Op int             `json:"op"`
		D  json.RawMessage `json:"d"`
	}
	if err := ws.ReadJSON(&first); err != nil || (first.Op != 2 && first.Op != 6) {
		return
	}
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	ready, _ := json.Marshal(map[string]any{"op": 0, "s": seq, "t": "READY", "d": map[string]any{
		"v": 10, "session_id": "fake-session-" + randHex(4), "resume_gateway_url": "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/gw",
		"user":        map[string]any{"id": s.AppID, "username": "askbridge", "discriminator": "0000", "bot": true},
		"guilds":      []any{},
		"application": map[string]any{"id": s.AppID, "flags": 0},
	}})
	if first.Op == 6 {
		ready, _ = json.Marshal(map[string]any{"op": 0, "s": seq, "t": "RESUMED", "d": map[string]any{}})
	}
	if c.write(ready) != nil {
		return
	}
	s.mu.Lock()
	if first.Op == 2 {
		s.identify = append(s.identify, first.D)
	}
	s.conns = append(s.conns, c)
	s.notify()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		for i, x := range s.conns {
			if x == c {
				s.conns = append(s.conns[:i], s.conns[i+1:]...)
				break
			}
		}
		s.notify()
		s.mu.Unlock()
	}()
	for {
		var f struct {
			Op int `json:"op"`
		}
		if err := ws.ReadJSON(&f); err != nil {
			return
		}
		if f.Op == 1 && c.write([]byte(`{"op":11}`)) != nil {
			return
		}
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

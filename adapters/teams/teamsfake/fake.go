// Package teamsfake is a local fake of the parts of Microsoft's Bot
// Framework a Teams bot talks to: the Bot Connector REST API
// (conversations, activities create, reply and update), the app token
// endpoint (client credentials) and the OpenID metadata and signing keys
// the bot checks inbound tokens against. It also plays Teams itself:
// people click card actions and reply in threads, and the fake delivers
// those activities to the bot with a token signed by its own key, the
// way the Bot Connector does. Payload shapes follow Microsoft's
// documentation; testdata/SOURCES names the pages.
package teamsfake

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/internal/changes"
)

// Paths the fake serves, as Microsoft's services do.
const (
	OpenIDPath = "/v1/.well-known/openidconfiguration"
	KeysPath   = "/v1/.well-known/keys"
	TokenPath  = "/botframework.com/oauth2/v2.0/token"
	Issuer     = "https://api.botframework.com"
	Scope      = "https://api.botframework.com/.default"
)

// Message is an activity the bot posted, as the fake holds it.
type Message struct {
	// Conversation is where it was posted: a channel thread
	// ("<channel>;messageid=<root>"), a personal or group chat.
	Conversation string
	ID           string
	// Channel is the channel of a thread, or "".
	Channel string
	// Root is the thread's root activity: the card that started it.
	Root      string
	ReplyToID string
	Text      string
	Summary   string
	// Card is the first Adaptive Card attachment, as JSON, or nil.
	Card    json.RawMessage
	Updates int
}

// Call is one request the bot made to the Bot Connector.
type Call struct {
	Method, Path string
}

// Server is the fake. Start it with Start.
type Server struct {
	t      testing.TB
	srv    *httptest.Server
	AppID  string
	secret string
	key    *rsa.PrivateKey
	kid    string

	mu       sync.Mutex
	changes  changes.Signal       // notified on every post and update
	tokens   map[string]time.Time // issued app tokens and their expiry
	issued   int
	messages []*Message
	calls    []Call
	next     int
	target   string
	fail     []int // statuses to answer the next Bot Connector calls with
}

// signingKey is every fake's key: making an RSA key takes long enough
// (most of a second under -race) that one per process keeps the
// scenarios lean, and no test needs two fakes to differ in it.
var signingKey = sync.OnceValues(func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) })

// OtherKey is a key no fake publishes, for forged tokens.
var OtherKey = sync.OnceValues(func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) })

// Start runs a fake for the bot with app id appID and client secret
// secret; it stops when the test ends.
func Start(t testing.TB, appID, secret string) *Server {
	key, err := signingKey()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{t: t, AppID: appID, secret: secret, key: key, kid: "fake-key-1", tokens: map[string]time.Time{}, next: 1700000000000}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+OpenIDPath, s.openID)
	mux.HandleFunc("GET "+KeysPath, s.keys)
	mux.HandleFunc("POST "+TokenPath, s.token)
	mux.HandleFunc("POST /v3/conversations", s.authed(s.createConversation))
	mux.HandleFunc("POST /v3/conversations/{conv}/activities", s.authed(s.sendActivity))
	mux.HandleFunc("POST /v3/conversations/{conv}/activities/{id}", s.authed(s.sendActivity))
	mux.HandleFunc("PUT /v3/conversations/{conv}/activities/{id}", s.authed(s.updateActivity))
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the fake's base: the service URL of its activities.
func (s *Server) URL() string { return s.srv.URL + "/" }

// OpenIDURL is the metadata's URL; TokenURL the token endpoint's.
func (s *Server) OpenIDURL() string { return s.srv.URL + OpenIDPath }
func (s *Server) TokenURL() string  { return s.srv.URL + TokenPath }

// SetTarget is the bot's messaging endpoint, where activities go.
func (s *Server) SetTarget(u string) {
	s.mu.Lock()
	s.target = u
	s.mu.Unlock()
}

// FailNext makes the next Bot Connector calls answer with these statuses
// (429s with Retry-After: 1), one each, before it works again.
func (s *Server) FailNext(statuses ...int) {
	s.mu.Lock()
	s.fail = append(s.fail, statuses...)
	s.mu.Unlock()
}

// TokensIssued counts the app tokens the endpoint has issued.
func (s *Server) TokensIssued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// errorResponse is the Bot Connector's ErrorResponse.
func errorResponse(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func (s *Server) openID(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                Issuer,
		"authorization_endpoint":                "https://invalid.botframework.com",
		"jwks_uri":                              s.srv.URL + KeysPath,
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"token_endpoint_auth_methods_supported": []string{"private_key_jwt"},
	})
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// JWK is the fake's signing key as the keys document lists it.
func (s *Server) JWK() map[string]any {
	pub := s.key.PublicKey
	der := pub.N.Bytes()
	sum := sha1.Sum(der)
	return map[string]any{
		"kty": "RSA", "use": "sig", "kid": s.kid, "x5t": b64(sum[:]),
		"n": b64(pub.N.Bytes()), "e": b64(big.NewInt(int64(pub.E)).Bytes()),
		// As the Bot Framework's keys are, for several channels: a token
		// signed with it may come with an activity from any of them.
		"endorsements": []string{"msteams", "webchat", "directline"},
	}
}

func (s *Server) keys(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"keys": []any{s.JWK()}})
}

// token is the client-credentials grant: the app id and secret (in the
// form or as basic auth) for the Bot Framework scope.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	switch {
	case r.PostForm.Get("grant_type") != "client_credentials":
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	case id != s.AppID || secret != s.secret:
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret provided."})
		return
	case r.PostForm.Get("scope") != Scope:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_scope"})
		return
	}
	buf := make([]byte, 24)
	_, _ = rand.Read(buf)
	tok := "fake-app-token-" + b64(buf)
	s.mu.Lock()
	s.tokens[tok] = time.Now().Add(time.Hour)
	s.issued++
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": tok})
}

// authed checks the app token on a Bot Connector call, records the call
// and answers any failure queued by FailNext.
func (s *Server) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		exp, ok := s.tokens[tok]
		s.calls = append(s.calls, Call{r.Method, r.URL.Path})
		fail := 0
		if ok && len(s.fail) > 0 {
			fail, s.fail = s.fail[0], s.fail[1:]
		}
		s.mu.Unlock()
		switch {
		case !ok || time.Now().After(exp):
			errorResponse(w, http.StatusUnauthorized, "Unauthorized", "Authorization has been denied for this request.")
		case fail == http.StatusTooManyRequests:
			w.Header().Set("Retry-After", "1")
			errorResponse(w, fail, "Throttled", "Too many requests")
		case fail != 0:
			errorResponse(w, fail, "ServiceError", "failure injected by the fake")
		default:
			h(w, r)
		}
	}
}

// Calls are the Bot Connector calls the bot made, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

type activity struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Summary     string `json:"summary"`
	ReplyToID   string `json:"replyToId"`
	Attachments []struct {
		ContentType string          `json:"contentType"`
		Content     json.RawMessage `json:"content"`
	} `json:"attachments"`
}

func (s *Server) newID() string {
	s.next++
	return strconv.Itoa(s.next)
}

// store adds a posted activity; s.mu is held.
func (s *Server) store(conv string, a activity) *Message {
	m := &Message{Conversation: conv, ID: s.newID(), ReplyToID: a.ReplyToID, Text: a.Text, Summary: a.Summary}
	if ch, root, ok := strings.Cut(conv, ";messageid="); ok {
		m.Channel, m.Root = ch, root
	}
	for _, at := range a.Attachments {
		if at.ContentType == "application/vnd.microsoft.card.adaptive" {
			m.Card = at.Content
			break
		}
	}
	s.messages = append(s.messages, m)
	s.changes.Notify()
	return m
}

func readActivity(w http.ResponseWriter, r *http.Request, into any) bool {
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(into); err != nil {
		errorResponse(w, http.StatusBadRequest, "BadArgument", "malformed JSON")
		return false
	}
	return true
}

// createConversation starts a channel thread (channelData.channel.id,
// with its first activity) or a personal chat with one member (the same
// chat again for the same member).
func (s *Server) createConversation(w http.ResponseWriter, r *http.Request) {
	var p struct {
		IsGroup     bool                  `json:"isGroup"`
		Members     []struct{ ID string } `json:"members"`
		TenantID    string                `json:"tenantId"`
		Activity    *activity             `json:"activity"`
		ChannelData struct {
			Channel struct{ ID string } `json:"channel"`
		} `json:"channelData"`
	}
	if !readActivity(w, r, &p) {
		return
	}
	if p.TenantID == "" {
		errorResponse(w, http.StatusBadRequest, "BadArgument", "tenantId is required")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case p.ChannelData.Channel.ID != "" && p.Activity != nil:
		root := s.newID()
		conv := p.ChannelData.Channel.ID + ";messageid=" + root
		m := s.store(conv, *p.Activity)
		m.ID = root
		writeJSON(w, http.StatusCreated, map[string]string{"id": conv, "activityId": root})
	case !p.IsGroup && len(p.Members) == 1 && p.Members[0].ID != "":
		conv := PersonalChat(p.Members[0].ID)
		if p.Activity != nil {
			m := s.store(conv, *p.Activity)
			writeJSON(w, http.StatusCreated, map[string]string{"id": conv, "activityId": m.ID})
			return
		}
		writeJSON(w, http.StatusCreated, map[string]string{"id": conv})
	default:
		errorResponse(w, http.StatusBadRequest, "BadArgument", "a conversation needs a channel and an activity, or one member")
	}
}

// PersonalChat is the fake's id of the bot's personal chat with member.
func PersonalChat(member string) string { return "a:personal-" + member }

func (s *Server) sendActivity(w http.ResponseWriter, r *http.Request) {
	var a activity
	if !readActivity(w, r, &a) {
		return
	}
	conv := r.PathValue("conv")
	if id := r.PathValue("id"); id != "" {
		a.ReplyToID = id
	}
	s.mu.Lock()
	m := s.store(conv, a)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]string{"id": m.ID})
}

func (s *Server) updateActivity(w http.ResponseWriter, r *http.Request) {
	var a activity
	if !readActivity(w, r, &a) {
		return
	}
	conv, id := r.PathValue("conv"), r.PathValue("id")
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.messages {
		// A thread's root lives in the thread's conversation.
		if m.ID == id && m.Conversation == conv {
			m.Text, m.Summary, m.Card = a.Text, a.Summary, nil
			for _, at := range a.Attachments {
				if at.ContentType == "application/vnd.microsoft.card.adaptive" {
					m.Card = at.Content
				}
			}
			m.Updates++
			s.changes.Notify()
			writeJSON(w, http.StatusOK, map[string]string{"id": id})
			return
		}
	}
	errorResponse(w, http.StatusNotFound, "ActivityNotFound", "no such activity in the conversation")
}

// Messages are the bot's posts, in order (copies).
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, len(s.messages))
	for i, m := range s.messages {
		out[i] = *m
	}
	return out
}

// Wait waits until cond holds, or timeout passes. It re-checks cond
// after every post and update, and every 20 ms for what the fake does
// not see (the program's store).
func (s *Server) Wait(timeout time.Duration, cond func() bool) bool {
	return s.changes.Wait(timeout, 20*time.Millisecond, cond)
}

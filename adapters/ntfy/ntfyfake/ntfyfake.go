// Package ntfyfake is a local ntfy server for tests: it takes messages
// published as JSON (the documented fields only, checked as ntfy checks
// them), keeps them per topic, answers with the message as ntfy does, and
// taps a notification's action buttons the way the ntfy app does. Its
// payloads follow ntfy's documentation (testdata/SOURCES).
package ntfyfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Publish is a message published as JSON: every field ntfy documents.
type Publish struct {
	Topic    string   `json:"topic"`
	Message  string   `json:"message,omitempty"`
	Title    string   `json:"title,omitempty"`
	Tags     []string `json:"tags,omitempty"`
	Priority int      `json:"priority,omitempty"`
	Actions  []Action `json:"actions,omitempty"`
	Click    string   `json:"click,omitempty"`
	Attach   string   `json:"attach,omitempty"`
	Markdown bool     `json:"markdown,omitempty"`
	Icon     string   `json:"icon,omitempty"`
	Filename string   `json:"filename,omitempty"`
	Delay    string   `json:"delay,omitempty"`
	Email    string   `json:"email,omitempty"`
	Call     string   `json:"call,omitempty"`
}

// Action is one action button: view, http or broadcast.
type Action struct {
	Action  string            `json:"action"`
	Label   string            `json:"label"`
	URL     string            `json:"url,omitempty"`
	Clear   bool              `json:"clear,omitempty"`
	Method  string            `json:"method,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	Intent  string            `json:"intent,omitempty"`
	Extras  map[string]string `json:"extras,omitempty"`
}

// Message is a published message as the server keeps and returns it.
type Message struct {
	ID    string `json:"id"`
	Time  int64  `json:"time"`
	Event string `json:"event"`
	Publish
	// Long is set when the message was over ntfy's 4,096 bytes, which
	// ntfy would have turned into an attachment.
	Long bool `json:"-"`
}

// MaxMessage is ntfy's message limit in bytes; MaxActions its limit on
// action buttons; MaxJSONBody the bytes a JSON publish must stay below
// (twice the message limit, for the JSON around it): ntfy reads no more
// and refuses one that reaches it as too large, whatever its message.
const (
	MaxMessage  = 4096
	MaxActions  = 3
	MaxJSONBody = 2 * MaxMessage
)

// Decode reads a JSON publish strictly, and checks it as ntfy does.
func Decode(r io.Reader) (Publish, error) {
	var p Publish
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, err
	}
	if p.Topic == "" || len(p.Topic) > 64 || strings.Trim(p.Topic, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") != "" {
		return p, fmt.Errorf("invalid topic %q", p.Topic)
	}
	if p.Priority < 0 || p.Priority > 5 {
		return p, fmt.Errorf("invalid priority %d", p.Priority)
	}
	if len(p.Actions) > MaxActions {
		return p, fmt.Errorf("%d actions: at most %d", len(p.Actions), MaxActions)
	}
	for i, a := range p.Actions {
		switch a.Action {
		case "view", "http":
			if a.Label == "" || a.URL == "" {
				return p, fmt.Errorf("action %d: label and url are required", i)
			}
		case "broadcast":
			if a.Label == "" {
				return p, fmt.Errorf("action %d: label is required", i)
			}
		default:
			return p, fmt.Errorf("action %d: %q is not view, http or broadcast", i, a.Action)
		}
	}
	return p, nil
}

// Server is the fake; its methods are safe for concurrent use.
type Server struct {
	URL string

	token   string
	mu      sync.Mutex
	topics  map[string][]Message
	changed chan struct{}
	limited int
	seq     int
}

// Start runs the fake until the test ends. With token set, a publish
// must carry it as a bearer token.
func Start(t testing.TB, token string) *Server {
	t.Helper()
	f := &Server{token: token, topics: map[string][]Message{}, changed: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// Limit makes the next n publishes answer 429, as a server whose request
// budget is spent does.
func (f *Server) Limit(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limited = n
}

func fail(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"code": code, "http": status, "error": msg})
}

func (f *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" || (r.Method != http.MethodPost && r.Method != http.MethodPut) {
		fail(w, http.StatusNotFound, 40401, "page not found: publish as JSON to the root URL")
		return
	}
	if f.token != "" && r.Header.Get("Authorization") != "Bearer "+f.token {
		fail(w, http.StatusUnauthorized, 40101, "unauthorized")
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, MaxJSONBody))
	if err != nil {
		fail(w, http.StatusBadRequest, 40000, err.Error())
		return
	}
	if len(raw) >= MaxJSONBody {
		fail(w, http.StatusRequestEntityTooLarge, 41303, "JSON body too large")
		return
	}
	p, err := Decode(bytes.NewReader(raw))
	if err != nil {
		fail(w, http.StatusBadRequest, 40000, err.Error())
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.limited > 0 {
		f.limited--
		fail(w, http.StatusTooManyRequests, 42901, "limit reached: too many requests")
		return
	}
	f.seq++
	m := Message{ID: fmt.Sprintf("msg%07d", f.seq), Time: time.Now().Unix(), Event: "message", Publish: p, Long: len(p.Message) > MaxMessage}
	f.topics[p.Topic] = append(f.topics[p.Topic], m)
	close(f.changed)
	f.changed = make(chan struct{})
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(m)
}

// Messages returns what topic has received, oldest first.
func (f *Server) Messages(topic string) []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Message(nil), f.topics[topic]...)
}

// Wait waits until cond holds of topic's messages, or d passes, woken by
// each publish.
func (f *Server) Wait(topic string, d time.Duration, cond func([]Message) bool) ([]Message, bool) {
	timeout := time.After(d)
	for {
		f.mu.Lock()
		ms, changed := append([]Message(nil), f.topics[topic]...), f.changed
		f.mu.Unlock()
		if cond(ms) {
			return ms, true
		}
		select {
		case <-changed:
		case <-timeout:
			return ms, false
		}
	}
}

// Tap presses the button labelled label on m as the ntfy app does: an
// http action sends its request (POST unless it names another method,
// with its headers and body); a view action opens its URL (a GET). It
// returns the status and body of the response.
func Tap(t testing.TB, m Message, label string) (int, string) {
	t.Helper()
	for _, a := range m.Actions {
		if a.Label != label {
			continue
		}
		method := http.MethodGet
		if a.Action == "http" {
			method = a.Method
			if method == "" {
				method = http.MethodPost
			}
		}
		req, err := http.NewRequest(method, a.URL, bytes.NewReader([]byte(a.Body)))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range a.Headers {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	t.Fatalf("no %q button on %+v", label, m.Actions)
	return 0, ""
}

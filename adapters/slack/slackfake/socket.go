package slackfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

func (f *Fake) connectionsOpen(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls["apps.connections.open"]++
	var refused string // a FailNext's error (the app token revoked, say)
	if q := f.fail["apps.connections.open"]; len(q) > 0 {
		refused, f.fail["apps.connections.open"] = q[0].Error, q[1:]
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer xapp-") {
		refused = "invalid_auth"
	}
	if refused != "" {
		_ = json.NewEncoder(w).Encode(apiError{Error: refused})
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
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(b, &ack) == nil && ack.EnvelopeID != "" {
			f.mu.Lock()
			f.acks[ack.EnvelopeID] = ack.Payload
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
	_, ok := f.acks[envelopeID]
	return ok
}

// AckPayload is the payload the client's acknowledgement of the envelope
// carried (a modal's response), or nil for none.
func (f *Fake) AckPayload(envelopeID string) json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.acks[envelopeID]
}

// SendEnvelope sends payload over a Socket Mode connection in an envelope
// of the given type ("events_api" or "interactive"), shaped like the
// fixture envelope, and returns its envelope id. It waits up to timeout
// for a connection.
func (f *Fake) SendEnvelope(typ string, payload []byte, timeout time.Duration) (string, error) {
	return f.SendRetry(typ, payload, 0, timeout)
}

// SendRetry is SendEnvelope for Slack's attempt-th retry of an event it
// got no acknowledgement for (0 is its first delivery): the envelope is a
// new one, numbered in retry_attempt, with retry_reason "timeout", as
// Slack sends it over Socket Mode.
func (f *Fake) SendRetry(typ string, payload []byte, attempt int, timeout time.Duration) (string, error) {
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
	if attempt > 0 {
		env["retry_attempt"], env["retry_reason"] = attempt, "timeout"
	}
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

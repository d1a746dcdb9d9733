package discordfake

import (
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/gorilla/websocket"
)

// Connected is how many gateway sessions are ready: READY sent, and the
// client's first heartbeat answered.
func (s *Server) Connected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Refuse makes the gateway refuse new connections (on) or take them
// again (off), as during an outage; sessions already open stay.
func (s *Server) Refuse(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = on
}

// Refused is how many connections the gateway has refused.
func (s *Server) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// CloseNextIdentify makes the gateway answer the next IDENTIFY (or
// RESUME) by closing the session with code and reason, as Discord
// closes it for a token it refuses (4004) or intents it does not allow
// (4014), or, with a code a client is to reconnect after, for a fault
// of its own (4000).
func (s *Server) CloseNextIdentify(code int, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeIdentify = websocket.FormatCloseMessage(code, reason)
}

// Drop cuts every gateway session without a close frame, as a network
// failure does.
func (s *Server) Drop() {
	s.mu.Lock()
	conns := append([]*gwConn(nil), s.conns...)
	s.mu.Unlock()
	for _, c := range conns {
		c.ws.Close()
	}
}

// Reconnect sends op 7 (Reconnect) to every gateway session: Discord's
// request that the client disconnect and resume on a new connection.
func (s *Server) Reconnect() error {
	s.mu.Lock()
	conns := append([]*gwConn(nil), s.conns...)
	s.mu.Unlock()
	var errs []error
	for _, c := range conns {
		errs = append(errs, c.write([]byte(`{"op":7,"d":null}`)))
	}
	return errors.Join(errs...)
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
// heartbeat ACKs until the client goes; it counts from the first.
func (s *Server) serveGateway(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.refuse {
		s.refused++
		s.notify()
		s.mu.Unlock()
		http.Error(w, "gateway unavailable", http.StatusServiceUnavailable)
		return
	}
	s.mu.Unlock()
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
	closing := s.closeIdentify
	s.closeIdentify = nil
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	if closing != nil {
		c.mu.Lock()
		_ = ws.WriteMessage(websocket.CloseMessage, closing)
		c.mu.Unlock()
		return
	}
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
	for beat := false; ; {
		var f struct {
			Op int `json:"op"`
		}
		if err := ws.ReadJSON(&f); err != nil {
			return
		}
		if f.Op != 1 {
			continue
		}
		if c.write([]byte(`{"op":11}`)) != nil {
			return
		}
		if !beat {
			// The session counts (Connected) from the client's first
			// heartbeat, which discordgo sends as soon as Open has read
			// READY; its heartbeat loop then waits 41 s for the next. A
			// session a test cut (Drop) before that first beat had the
			// loop write to the dead connection, and its error's log
			// line read Session.gateway while the adapter's next Open
			// wrote it: a data race inside discordgo v0.29.0 (wsapi.go,
			// heartbeat), which failed -race runs now and then.
			beat = true
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.notify()
			s.mu.Unlock()
		}
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

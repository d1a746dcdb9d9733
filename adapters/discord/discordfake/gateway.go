package discordfake

import (
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"github.com/gorilla/websocket"
)

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

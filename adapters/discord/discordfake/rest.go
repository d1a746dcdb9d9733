package discordfake

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

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
	if at, ok := s.dispatched[id]; ok && s.clock().Sub(at) > ResponseWindow {
		// Past the window the token is invalid, whatever was recorded.
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

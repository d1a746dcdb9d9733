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
	"strconv"
	"strings"
	"time"
)

// Interaction is an interaction the fake built, ready to send.
type Interaction struct {
	ID   string
	Body []byte
}

// Click builds a button click by u on a message, from Discord's
// documented button interaction.
func (s *Server) Click(u User, messageID, customID string) Interaction {
	return s.build(buttonFixture, u, messageID, func(v map[string]any, _ *Message) {
		v["data"] = map[string]any{"custom_id": customID, "component_type": 2}
	})
}

// build makes an interaction by u on messageID from fixture, under a
// fresh id and token the fake accepts a callback for: fill sets what the
// kind of interaction carries (its data), m being the message or nil.
func (s *Server) build(fixture []byte, u User, messageID string, fill func(v map[string]any, m *Message)) Interaction {
	var v map[string]any
	if err := json.Unmarshal(fixture, &v); err != nil {
		panic(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.byID[messageID]
	id, token := s.snowflake(), "tok-"+randHex(16)
	s.tokens[id], s.onMessage[id] = token, messageID
	v["id"], v["token"], v["application_id"], v["guild_id"] = id, token, s.AppID, s.GuildID
	fill(v, m)
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
	return s.build(modalFixture, u, messageID, func(v map[string]any, m *Message) {
		var rows []any
		for k, val := range values {
			rows = append(rows, map[string]any{"type": 1, "components": []any{
				map[string]any{"type": 4, "custom_id": k, "value": val},
			}})
		}
		v["data"] = map[string]any{"custom_id": customID, "components": rows}
		if ch, ok := v["channel"].(map[string]any); ok && m != nil {
			ch["id"] = m.ChannelID
		}
	})
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
	if s.clock != nil {
		s.dispatched[in.ID] = s.clock()
	}
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

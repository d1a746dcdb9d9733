package slackfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// apiError is Slack's failure body.
type apiError struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

// method wraps a Web API handler: it counts the call, reads the form,
// applies queued failures and writes the JSON answer.
func (f *Fake) method(name string, h func(url.Values) any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, err := url.ParseQuery(string(body))
		if err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.calls[name]++
		delay, held := f.latency[name], f.held[name]
		var fl *Failure
		if q := f.fail[name]; len(q) > 0 {
			fl = &q[0]
			f.fail[name] = q[1:]
		}
		f.mu.Unlock()
		if held != nil {
			select {
			case <-held:
			case <-r.Context().Done():
				return
			}
		}
		time.Sleep(delay)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case fl != nil && fl.RetryAfter > 0:
			w.Header().Set("Retry-After", fmt.Sprint(fl.RetryAfter))
			w.WriteHeader(http.StatusTooManyRequests)
			_ = json.NewEncoder(w).Encode(apiError{Error: "ratelimited"})
			return
		case fl != nil && fl.Status != 0:
			w.WriteHeader(fl.Status)
			_ = json.NewEncoder(w).Encode(apiError{Error: fl.Error})
			return
		case fl != nil:
			_ = json.NewEncoder(w).Encode(apiError{Error: fl.Error})
			return
		case form.Get("token") == "":
			_ = json.NewEncoder(w).Encode(apiError{Error: "not_authed"})
			return
		}
		_ = json.NewEncoder(w).Encode(h(form))
	}
}

func (f *Fake) authTest(url.Values) any {
	out := map[string]any{"ok": true, "url": "https://fake.slack.test/", "team": "Fake", "user": "askbridge",
		"team_id": TeamID, "user_id": BotUserID, "bot_id": BotID}
	f.mu.Lock()
	if f.enterprise != "" {
		out["enterprise_id"] = f.enterprise
	}
	f.mu.Unlock()
	return out
}

func (f *Fake) postMessage(v url.Values) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := v.Get("channel")
	if code := f.chanErr[ch]; code != "" {
		return apiError{Error: code}
	}
	if ch == "" {
		return apiError{Error: "channel_not_found"}
	}
	if strings.HasPrefix(ch, "U") || strings.HasPrefix(ch, "W") {
		ch = "D" + ch[1:] // a post to a person lands in their DM
	}
	m := &Message{Channel: ch, TS: f.nextTS(), ThreadTS: v.Get("thread_ts"), Text: v.Get("text"),
		User: BotUserID, BotID: BotID, Broadcast: v.Get("reply_broadcast") == "true"}
	if b := v.Get("blocks"); b != "" {
		m.Blocks = json.RawMessage(b)
	}
	f.messages = append(f.messages, m)
	f.notify()
	return map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS, "message": wireMessage(m)}
}

func (f *Fake) update(v url.Values) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := v.Get("channel")
	if code := f.chanErr[ch]; code != "" {
		return apiError{Error: code}
	}
	m := f.find(ch, v.Get("ts"))
	if m == nil {
		return apiError{Error: "message_not_found"}
	}
	if m.BotID != BotID {
		return apiError{Error: "cant_update_message"}
	}
	if v.Has("text") {
		m.Text = v.Get("text")
	}
	if v.Has("blocks") { // omitted blocks are kept, as Slack does
		m.Blocks = json.RawMessage(v.Get("blocks"))
	}
	m.Edits++
	f.notify()
	return map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS, "text": m.Text}
}

func (f *Fake) postEphemeral(v url.Values) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := v.Get("channel")
	if code := f.chanErr[ch]; code != "" {
		return apiError{Error: code}
	}
	if v.Get("user") == "" {
		return apiError{Error: "user_not_in_channel"}
	}
	e := Ephemeral{Channel: ch, User: v.Get("user"), ThreadTS: v.Get("thread_ts"), Text: v.Get("text")}
	if b := v.Get("blocks"); b != "" {
		e.Blocks = json.RawMessage(b)
	}
	f.ephemerals = append(f.ephemerals, e)
	f.notify()
	return map[string]any{"ok": true, "message_ts": f.nextTS()}
}

func (f *Fake) replies(v url.Values) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, ts := v.Get("channel"), v.Get("ts")
	root := f.find(ch, ts)
	if root == nil {
		return apiError{Error: "thread_not_found"}
	}
	msgs := []any{wireMessage(root)}
	if root.ThreadTS == "" {
		for _, m := range f.messages {
			if m.Channel == ch && m.ThreadTS == ts {
				msgs = append(msgs, wireMessage(m))
			}
		}
	}
	var limit int
	if _, err := fmt.Sscan(v.Get("limit"), &limit); err == nil && limit > 0 && limit < len(msgs) {
		msgs = msgs[:limit]
	}
	return map[string]any{"ok": true, "messages": msgs, "has_more": false}
}

func (f *Fake) groupMembers(v url.Values) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	members, ok := f.groups[v.Get("usergroup")]
	if !ok {
		return apiError{Error: "no_such_subteam"}
	}
	return map[string]any{"ok": true, "users": members}
}

func (f *Fake) userInfo(v url.Values) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, ok := f.users[v.Get("user")]
	if !ok {
		return apiError{Error: "user_not_found"}
	}
	user := map[string]any{
		"id": u.ID, "team_id": u.team(), "name": strings.ToLower(strings.ReplaceAll(u.Name, " ", ".")), "real_name": u.Name,
		"profile": map[string]any{"real_name": u.Name, "display_name": u.Name},
	}
	if u.Enterprise != "" {
		// Slack's user object for a member of an Enterprise Grid
		// organisation (docs.slack.dev, the user type's enterprise_user).
		user["enterprise_user"] = map[string]any{"id": u.ID, "enterprise_id": u.Enterprise, "enterprise_name": "Org " + u.Enterprise,
			"is_admin": false, "is_owner": false, "teams": []string{u.team()}}
	}
	return map[string]any{"ok": true, "user": user}
}

// wireMessage is a message as conversations.replies and chat.postMessage
// show it.
func wireMessage(m *Message) map[string]any {
	out := map[string]any{"type": "message", "ts": m.TS, "text": m.Text, "user": m.User}
	if m.ThreadTS != "" {
		out["thread_ts"] = m.ThreadTS
	}
	if m.BotID != "" {
		out["bot_id"] = m.BotID
	}
	if len(m.Blocks) > 0 {
		out["blocks"] = m.Blocks
	}
	return out
}

// socket mode ---------------------------------------------------------------

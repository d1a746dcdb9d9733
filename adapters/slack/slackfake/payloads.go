package slackfake

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Button is a button of a message's blocks.
type Button struct {
	BlockID, ActionID, Value, Text, Style string
}

// Buttons lists the message's buttons in order: section accessories and
// actions blocks' elements.
func (m Message) Buttons() []Button {
	var blocks []struct {
		BlockID   string `json:"block_id"`
		Accessory *struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
			Style    string `json:"style"`
			Text     struct {
				Text string `json:"text"`
			} `json:"text"`
		} `json:"accessory"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
			Style    string `json:"style"`
			Text     json.RawMessage
		} `json:"elements"`
	}
	if len(m.Blocks) == 0 || json.Unmarshal(m.Blocks, &blocks) != nil {
		return nil
	}
	var out []Button
	for _, b := range blocks {
		if a := b.Accessory; a != nil && a.Type == "button" {
			out = append(out, Button{BlockID: b.BlockID, ActionID: a.ActionID, Value: a.Value, Text: a.Text.Text, Style: a.Style})
		}
		for _, e := range b.Elements {
			if e.Type != "button" {
				continue
			}
			var t struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(e.Text, &t)
			out = append(out, Button{BlockID: b.BlockID, ActionID: e.ActionID, Value: e.Value, Text: t.Text, Style: e.Style})
		}
	}
	return out
}

// PlainText is every text of the message's blocks (or its text when it
// has none), one per line, with Slack's &amp; &lt; &gt; decoded: what a
// person reads.
func (m Message) PlainText() string { return plainText(m.Blocks, m.Text) }

// PlainText of a private message.
func (e Ephemeral) PlainText() string { return plainText(e.Blocks, e.Text) }

func plainText(blocks json.RawMessage, text string) string {
	var v any
	if len(blocks) == 0 || json.Unmarshal(blocks, &v) != nil {
		return decode(text)
	}
	var parts []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if s, ok := v["text"].(string); ok {
				parts = append(parts, s)
			}
			for k, x := range v {
				if k != "text" || !isString(x) {
					walk(x)
				}
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return decode(strings.Join(parts, "\n"))
}

func isString(v any) bool { _, ok := v.(string); return ok }

var decoder = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

func decode(s string) string { return decoder.Replace(s) }

// ClickPayload is the block_actions payload Slack sends when user presses
// b on message m, built from the fixture with its user, channel, message
// and action replaced.
func ClickPayload(u User, m Message, b Button) []byte { return clickPayload(u, m, b, "") }

// ClickWithTrigger is ClickPayload with a fresh trigger id the fake will
// take once in views.open, as a real click's is.
func (f *Fake) ClickWithTrigger(u User, m Message, b Button) []byte {
	return clickPayload(u, m, b, f.trigger(u.ID))
}

func clickPayload(u User, m Message, b Button, trigger string) []byte {
	var p map[string]any
	if err := json.Unmarshal(fixture("slack-block-actions.json"), &p); err != nil {
		panic(err)
	}
	p["user"] = map[string]any{"id": u.ID, "username": strings.ToLower(u.Name), "name": strings.ToLower(u.Name), "team_id": u.payloadTeam()}
	p["container"] = map[string]any{"type": "message", "message_ts": m.TS, "channel_id": m.Channel, "is_ephemeral": false}
	p["channel"] = map[string]any{"id": m.Channel}
	if trigger != "" {
		p["trigger_id"] = trigger
	}
	msg := wireMessage(&m)
	msg["team"] = TeamID
	p["message"] = msg
	p["actions"] = []any{map[string]any{
		"action_id": b.ActionID, "block_id": b.BlockID, "value": b.Value, "type": "button",
		"text":      map[string]any{"type": "plain_text", "text": b.Text},
		"action_ts": fmt.Sprintf("%d.000001", time.Now().Unix()),
	}}
	out, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	return out
}

// ReplyEvent is the Events API callback Slack sends for a thread reply m
// (see AddReply), built from the fixture. Each call gets a new event id;
// Slack's retry of the same event is the same body sent again. A reply
// with a File is the message.file_share event Slack sends for a message
// that shares one.
func (f *Fake) ReplyEvent(m Message) (body []byte, eventID string) {
	name := "slack-event-message-thread-reply.json"
	if m.File != "" {
		name = "slack-event-message-file-share.json"
	}
	return f.callback(name, func(ev map[string]any) {
		ev["user"], ev["text"], ev["ts"], ev["event_ts"] = m.User, m.Text, m.TS, m.TS
		ev["thread_ts"], ev["channel"] = m.ThreadTS, m.Channel
		// In a shared channel, user_team is the replier's own workspace.
		f.mu.Lock()
		team := f.users[m.User].team()
		// parent_user_id is whoever posted the thread's root, as Slack
		// sends it; a root the fake does not hold (or no thread) names
		// nobody.
		delete(ev, "parent_user_id")
		if root := f.find(m.Channel, m.ThreadTS); m.ThreadTS != "" && root != nil {
			ev["parent_user_id"] = root.User
		}
		f.mu.Unlock()
		ev["team"], ev["user_team"], ev["source_team"] = team, team, team
		if strings.HasPrefix(m.Channel, "D") {
			ev["channel_type"] = "im" // a DM's message.im event, as Slack's docs show it
		}
		if m.BotID != "" {
			ev["bot_id"] = m.BotID
		}
		if m.File != "" {
			file := ev["files"].([]any)[0].(map[string]any)
			file["name"], file["title"], file["user"] = m.File, m.File, m.User
		}
	})
}

// callback is the Events API callback of fixture name with a new event
// id, its event filled in by fill, and what every callback carries (the
// workspace, the event's id and time, the bot's authorization).
func (f *Fake) callback(name string, fill func(ev map[string]any)) (body []byte, eventID string) {
	var p map[string]any
	if err := json.Unmarshal(fixture(name), &p); err != nil {
		panic(err)
	}
	f.mu.Lock()
	f.events++
	eventID = fmt.Sprintf("Ev%d%04d", f.base, f.events)
	f.mu.Unlock()
	fill(p["event"].(map[string]any))
	p["team_id"] = TeamID
	p["event_id"] = eventID
	p["event_time"] = time.Now().Unix()
	p["authorizations"] = []any{map[string]any{"team_id": TeamID, "user_id": BotUserID, "is_bot": true}}
	out, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	return out, eventID
}

// URLVerification is the body Slack sends when the events URL is set.
func URLVerification(challenge string) []byte {
	b, _ := json.Marshal(map[string]string{"token": "verification-token", "challenge": challenge, "type": "url_verification"})
	return b
}

// InteractionForm is the form body of an Interactivity request carrying
// payload.
func InteractionForm(payload []byte) []byte {
	return []byte("payload=" + url.QueryEscape(string(payload)))
}

// Sign computes Slack's request signature of body at ts with secret:
// v0=hex(HMAC-SHA256(secret, "v0:" + ts + ":" + body)).
func Sign(secret string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "v0:%d:", ts)
	m.Write(body)
	return "v0=" + hex.EncodeToString(m.Sum(nil))
}

// Request is one HTTP request as Slack would send it to an app.
type Request struct {
	URL         string // the app's endpoint
	Secret      string // signs it; the app must know the same
	At          time.Time
	ContentType string
	Body        []byte
	RetryNum    int // X-Slack-Retry-Num, when Slack retries an event
	// Client sends it; nil is http.DefaultClient. A benchmark gives each
	// clicking person a client of their own.
	Client *http.Client
}

// Send posts the request, signed, and returns the status and body.
func (r Request) Send(ctx context.Context) (int, string, error) {
	at := r.At
	if at.IsZero() {
		at = time.Now()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", r.ContentType)
	req.Header.Set("X-Slack-Request-Timestamp", fmt.Sprint(at.Unix()))
	req.Header.Set("X-Slack-Signature", Sign(r.Secret, at.Unix(), r.Body))
	if r.RetryNum > 0 {
		req.Header.Set("X-Slack-Retry-Num", fmt.Sprint(r.RetryNum))
		req.Header.Set("X-Slack-Retry-Reason", "http_timeout")
	}
	client := r.Client
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	return res.StatusCode, buf.String(), nil
}

// Click is a signed Interactivity request for a click.
func Click(endpoint, secret string, payload []byte) Request {
	return Request{URL: endpoint, Secret: secret, ContentType: "application/x-www-form-urlencoded", Body: InteractionForm(payload)}
}

// Event is a signed Events API request.
func Event(endpoint, secret string, body []byte) Request {
	return Request{URL: endpoint, Secret: secret, ContentType: "application/json", Body: body}
}

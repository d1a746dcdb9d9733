package teamsfake

import (
	"bytes"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// The fake playing Teams: the activities people's clicks and replies
// send the bot, signed as the Bot Connector signs them.

// User is a Teams user.
type User struct {
	ID   string // the channel's id, "29:…"
	AAD  string // the Microsoft Entra object id
	Name string
}

// Token options for Sign.
type Token struct {
	Audience   string // default the app id
	Issuer     string // default Issuer
	ServiceURL string // default the fake's URL
	Expires    time.Time
	NotBefore  time.Time
	// Key signs it; nil is the fake's own published key.
	Key *rsa.PrivateKey
	// KID names the key in the token's header; default the fake's own
	// key's id (a key rotated in under another id, or one made up).
	KID string
}

// Sign makes a bearer token as the Bot Connector does.
func (s *Server) Sign(o Token) string {
	if o.Audience == "" {
		o.Audience = s.AppID
	}
	if o.Issuer == "" {
		o.Issuer = Issuer
	}
	if o.ServiceURL == "" {
		o.ServiceURL = s.URL()
	}
	now := time.Now()
	if o.Expires.IsZero() {
		o.Expires = now.Add(time.Hour)
	}
	if o.NotBefore.IsZero() {
		o.NotBefore = now.Add(-time.Minute)
	}
	key := o.Key
	if key == nil {
		key = s.key
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
		"iss": o.Issuer, "aud": o.Audience, "exp": o.Expires.Unix(), "nbf": o.NotBefore.Unix(), "serviceurl": o.ServiceURL,
	})
	tok.Header["kid"] = s.kid
	if o.KID != "" {
		tok.Header["kid"] = o.KID
	}
	signed, err := tok.SignedString(key)
	if err != nil {
		s.t.Fatal(err)
	}
	return signed
}

// Deliver POSTs an activity to the bot with token (the Bot Connector's
// own when token is ""), and returns the status and body.
func (s *Server) Deliver(act map[string]any, token string) (int, []byte, error) {
	s.mu.Lock()
	target := s.target
	s.mu.Unlock()
	if target == "" {
		return 0, nil, fmt.Errorf("teamsfake: no target set")
	}
	if token == "" {
		token = s.Sign(Token{})
	}
	body, _ := json.Marshal(act)
	req, _ := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out, nil
}

// base is what every activity from Teams carries. A user without an
// AAD object id (an anonymous meeting participant) is sent without one.
func (s *Server) base(typ string, u User, conv, convType string) map[string]any {
	from := map[string]string{"id": u.ID, "name": u.Name}
	if u.AAD != "" {
		from["aadObjectId"] = u.AAD
	}
	return map[string]any{
		"type": typ, "id": "f:" + strconv.FormatInt(time.Now().UnixNano(), 36), "timestamp": time.Now().UTC().Format(time.RFC3339Nano),
		"serviceUrl": s.URL(), "channelId": "msteams",
		"from":         from,
		"conversation": map[string]any{"id": conv, "conversationType": convType, "tenantId": Tenant, "isGroup": convType != "personal"},
		"recipient":    map[string]string{"id": "28:" + s.AppID, "name": "askbridge"},
		"channelData":  map[string]any{"tenant": map[string]string{"id": Tenant}},
	}
}

// Tenant is the fake's tenant id.
const Tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"

func convType(conv string) string {
	switch {
	case strings.HasPrefix(conv, "a:"):
		return "personal"
	case strings.Contains(conv, ";messageid="):
		return "channel"
	}
	return "groupChat"
}

// ExecuteActivity is the invoke a click on an Action.Execute sends:
// adaptiveCard/action with the action's verb and its data merged with
// the card's inputs.
func (s *Server) ExecuteActivity(u User, m Message, verb string, data map[string]any) map[string]any {
	a := s.base("invoke", u, m.Conversation, convType(m.Conversation))
	a["name"] = "adaptiveCard/action"
	a["replyToId"] = m.ID
	a["value"] = map[string]any{"action": map[string]any{"type": "Action.Execute", "verb": verb, "data": data}, "trigger": "manual"}
	return a
}

// SubmitActivity is the message a click on an Action.Submit sends: the
// data merged with the card's inputs as its value.
func (s *Server) SubmitActivity(u User, m Message, data map[string]any) map[string]any {
	a := s.base("message", u, m.Conversation, convType(m.Conversation))
	a["replyToId"] = m.ID
	a["value"] = data
	return a
}

// ReplyActivity is a message in a channel thread (or a chat): Teams
// sends the text as HTML.
func (s *Server) ReplyActivity(u User, conv, text string) map[string]any {
	a := s.base("message", u, conv, convType(conv))
	a["text"] = text
	a["textFormat"] = "plain"
	return a
}

// EditActivity is what Teams sends the bot when u edits their message
// id in conv to text: a messageUpdate of eventType editMessage, with the
// message's id and its new words alone.
func (s *Server) EditActivity(u User, conv, id, text string) map[string]any {
	a := s.revision("messageUpdate", "editMessage", u, conv, id)
	a["text"] = text
	a["textFormat"] = "plain"
	return a
}

// SoftDeleteActivity is what Teams sends the bot when u deletes message
// id in conv: a messageDelete of eventType softDeleteMessage.
func (s *Server) SoftDeleteActivity(u User, conv, id string) map[string]any {
	return s.revision("messageDelete", "softDeleteMessage", u, conv, id)
}

// revision is an edit's or a deletion's activity: the message's own id,
// and the event in channelData.
func (s *Server) revision(typ, event string, u User, conv, id string) map[string]any {
	a := s.base(typ, u, conv, convType(conv))
	a["id"] = id
	a["channelData"].(map[string]any)["eventType"] = event
	return a
}

// MentioningBot is message activity a as Teams sends one that @mentions
// the bot: "<at>askbridge</at> " before its text and the mention entity.
// Without the resource-specific consent to read every chat message, a
// bot in a group chat receives only such messages.
func (s *Server) MentioningBot(a map[string]any) map[string]any {
	tag := "<at>askbridge</at>"
	a["text"] = tag + " " + fmt.Sprint(a["text"])
	a["entities"] = []any{map[string]any{"type": "mention", "text": tag,
		"mentioned": map[string]string{"id": "28:" + s.AppID, "name": "askbridge"}}}
	return a
}

// FileReplyActivity is ReplyActivity with a file the user shared
// (name), as Teams sends one: the text's own text/html attachment, then
// the file's download-info attachment.
func (s *Server) FileReplyActivity(u User, conv, text, name string) map[string]any {
	a := s.ReplyActivity(u, conv, text)
	a["attachments"] = []any{
		map[string]any{"contentType": "text/html", "content": "<p>" + text + "</p>"},
		FileAttachment(name),
	}
	return a
}

// FileAttachment is a shared file's attachment on a message activity.
func FileAttachment(name string) map[string]any {
	return map[string]any{
		"contentType": "application/vnd.microsoft.teams.file.download.info",
		"contentUrl":  "https://contoso.sharepoint.com/personal/files/" + name,
		"name":        name,
		"content": map[string]any{
			"downloadUrl": "https://contoso.sharepoint.com/download/" + name,
			"uniqueId":    "1150D938-8870-4044-9F2C-5BBDEBA70C9D",
			"fileType":    path.Ext(name),
		},
	}
}

// InvokeNote reads what an adaptiveCard/action response showed the
// clicker: its message value.
func InvokeNote(body []byte) (string, error) {
	var r struct {
		StatusCode int    `json:"statusCode"`
		Type       string `json:"type"`
		Value      any    `json:"value"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return "", err
	}
	if r.StatusCode != http.StatusOK || r.Type != "application/vnd.microsoft.activity.message" {
		return "", fmt.Errorf("teamsfake: invoke answered %d %s", r.StatusCode, r.Type)
	}
	note, _ := r.Value.(string)
	return note, nil
}

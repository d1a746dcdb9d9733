package teams

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/retryafter"
	"github.com/askbridge/askbridge/core"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// connector makes the Bot Connector REST calls with the bot's app token
// (client credentials, cached by oauth2 until it expires).
type connector struct {
	base   string // the service URL, ending in "/"
	http   *http.Client
	tokens oauth2.TokenSource
	// now reads a Retry-After given as a date: the adapter's clock.
	now func() time.Time
	// throttled grows the wait of each 429 in a row in a conversation.
	throttled throttle
}

// newConnector returns a connector whose calls carry the bot's token.
// The token source caches the token and fetches a new one shortly
// before it expires, through base.
func newConnector(serviceURL string, cc clientcredentials.Config, base *http.Client) *connector {
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, base)
	if !strings.HasSuffix(serviceURL, "/") {
		serviceURL += "/"
	}
	return &connector{base: serviceURL, http: base, tokens: oauth2.ReuseTokenSource(nil, cc.TokenSource(ctx)), now: time.Now}
}

// APIError is a Bot Connector call the service answered with an error
// status.
type APIError struct {
	Status int
	// RetryAfter is the wait the service named (Retry-After); for a 429,
	// the wait before the call goes again, which the connector chooses
	// when the service names none (throttle).
	RetryAfter time.Duration
	Body       string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("teams: bot connector answered %d: %s", e.Status, e.Body)
}

// RetryWait is the wait a 5xx named (Retry-After), which core's drain
// keeps to: the connector may have acted, so the retry is a failed
// attempt, but not one to send sooner than asked. A 429's wait reaches
// core as a core.RetryAfter instead (classify).
func (e *APIError) RetryWait() time.Duration {
	if e.Status >= 500 {
		return e.RetryAfter
	}
	return 0
}

func (c *connector) call(ctx context.Context, method, path string, in, out any) error {
	// Without HTML escaping: a card's "<" stays one byte, as Size counts.
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(in); err != nil {
		return &core.Permanent{Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, &body)
	if err != nil {
		return &core.Permanent{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	// The token is fetched before the call, not by the client's
	// transport: whatever stops it (the token endpoint refusing, or out
	// of reach), nothing reached Teams.
	tok, err := c.tokens.Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil {
			err = errors.New(re.Response.Status) // the body is Entra's long description of it
		}
		return &core.NotSent{Err: fmt.Errorf("teams: app token: %w", err)}
	}
	tok.SetAuthHeader(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	// A 429 is counted against the conversation the call is in (or the
	// bot's, for a new one), as Teams limits each conversation apart.
	conv, _, _ := strings.Cut(path, "/activities")
	if resp.StatusCode/100 != 2 {
		e := &APIError{Status: resp.StatusCode, RetryAfter: retryafter.Parse(resp.Header, c.now()), Body: strings.TrimSpace(string(raw[:min(len(raw), 300)]))}
		if e.Status == http.StatusTooManyRequests {
			e.RetryAfter = c.throttled.wait(conv, e.RetryAfter)
		}
		return classify(e)
	}
	c.throttled.ok(conv)
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("teams: bot connector's answer: %w", err)
	}
	return nil
}

// classify maps a Bot Connector error to what the outbox does next, as
// Teams' table of status codes says (SOURCES): its 429 waits as told, or
// as the connector backs off when it is not told (throttle); a
// 5xx may come after the thread or message was made, so it is returned
// as it is, not as core.NotSent: the retry's card then says it may be a
// repeat. Of the other 4xx, those that name a passing state are not sent
// and retried, each a failed attempt, so the outbox backs off further
// each time: a timeout, a conflict, a lock, too early, and Teams' 412
// ("precondition failed" by concurrent operations on the conversation,
// to be retried "with exponential backoff"). The rest refuse the request
// itself (400, 401, 403, 404, a 413 for a message over Teams' size),
// which the same request sent again cannot change: permanent.
func classify(e *APIError) error {
	switch {
	case e.Status >= 500:
		return e
	case e.Status == http.StatusTooManyRequests:
		return &core.RetryAfter{After: max(e.RetryAfter, time.Second), Err: e}
	case e.Status >= 400 && !passing(e.Status):
		return &core.Permanent{Err: e}
	}
	return &core.NotSent{Err: e}
}

// passing reports whether a 4xx status names a state that passes.
func passing(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusPreconditionFailed, http.StatusLocked, http.StatusTooEarly:
		return true
	}
	return false
}

func convPath(conv string) string { return "v3/conversations/" + url.PathEscape(conv) }

// createConversation starts a conversation: a channel thread whose root
// is p.Activity, or a personal chat.
func (c *connector) createConversation(ctx context.Context, p ConversationParameters) (ConversationResourceResponse, error) {
	var out ConversationResourceResponse
	err := c.call(ctx, http.MethodPost, "v3/conversations", p, &out)
	return out, err
}

// send posts a into conversation conv.
func (c *connector) send(ctx context.Context, conv string, a *Activity) (string, error) {
	var out ResourceResponse
	err := c.call(ctx, http.MethodPost, convPath(conv)+"/activities", a, &out)
	return out.ID, err
}

// update replaces activity id in conv with a.
func (c *connector) update(ctx context.Context, conv, id string, a *Activity) error {
	a.ID = id
	return c.call(ctx, http.MethodPut, convPath(conv)+"/activities/"+url.PathEscape(id), a, nil)
}

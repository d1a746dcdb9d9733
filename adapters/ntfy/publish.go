package ntfy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/retryafter"
	"github.com/askbridge/askbridge/adapters/internal/textlimit"
	"github.com/askbridge/askbridge/core"
)

// MaxBody is what a publish's JSON body must stay below: ntfy reads a
// JSON publish up to twice its message limit (server.go,
// transformBodyJSON) and refuses one that reaches it with 413, "JSON body
// too large", however short its message. Quotes, backslashes and line
// breaks take two bytes each in JSON, so a message within MaxMessage can
// still make a body over it.
const MaxBody = 2 * MaxMessage

// encode is p as the JSON body a publish sends. "<", ">" and "&" go as
// they are: HTML-escaped, each would take six bytes of MaxBody, and a
// question about a shell command or a page would not be published.
func encode(p Publication) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// fits reports whether ntfy takes p's body.
func fits(p Publication) bool {
	b, err := encode(p)
	return err == nil && len(b) < MaxBody
}

// fit is p with its message cut, from the end, until its body is one
// ntfy takes; p itself when it is already. A message cut here no longer
// shows all it was made to (a tool call's arguments, perhaps), so every
// button that would act at once opens its page instead, which shows the
// question whole before it records anything.
func fit(p Publication) Publication {
	if fits(p) {
		return p
	}
	whole := p.Message
	n := textlimit.Most(len(whole), func(n int) bool {
		p.Message = textlimit.Bytes.Cut(whole, n)
		return fits(p)
	})
	p.Message = textlimit.Bytes.Cut(whole, max(n, 0))
	acts := make([]Action, len(p.Actions))
	for i, a := range p.Actions {
		if a.Action == "http" {
			a.Action, a.Method, a.Clear = "view", "", false
		}
		acts[i] = a
	}
	p.Actions = acts
	return p
}

// noRedirects is the publishing client's redirect policy: a redirect is
// answered, not followed. Go's client would send the POST on as a GET
// after a 301, 302 or 303, so nothing is published and the page it lands
// on reads as a success without an id; and it sends the Authorization
// header on to the same host even from https to http, so a 307 or 308
// to http would carry the token in the clear. ntfy's publish never
// redirects; one that does is a server URL to correct (refusal).
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// publish sends p, cut to fit if need be, and returns ntfy's id for the
// message. Render's and RenderDigest's publications come fitted, so that
// they show what is sent; the fit here is for any other (a refused tap's
// note), and costs a fitted one a single encoding more.
func (a *Adapter) publish(ctx context.Context, p Publication) (string, error) {
	body, err := encode(fit(p))
	if err != nil {
		return "", &core.Permanent{Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.opts.ServerURL+"/", bytes.NewReader(body))
	if err != nil {
		return "", &core.Permanent{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	if a.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+a.opts.Token)
	}
	res, err := a.http.Do(req)
	if err != nil {
		return "", err // it may or may not have reached ntfy
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if res.StatusCode/100 != 2 {
		return "", refusal(res, raw, a.page.Clock())
	}
	var m struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &m); err != nil || m.ID == "" {
		return "", fmt.Errorf("ntfy: published, but the answer names no message: %.200s", raw)
	}
	return m.ID, nil
}

// refusal maps ntfy's refusal to what the outbox does: a 429 waits for
// the server's Retry-After (else the five seconds its request bucket
// takes to refill by one), a 5xx is retried as a possible
// repeat, and any other refusal (an unknown topic's 403, a token
// refused, a redirect) is given up on and recorded. now is the adapter's
// clock, which a Retry-After date is read against.
func refusal(res *http.Response, raw []byte, now time.Time) error {
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	err := fmt.Errorf("ntfy: %s: %s", res.Status, e.Error)
	switch {
	case res.StatusCode == http.StatusTooManyRequests:
		wait := retryafter.Parse(res.Header, now) // seconds or a date, capped
		if wait <= 0 {
			wait = 5 * time.Second
		}
		return &core.RetryAfter{After: wait, Err: err}
	case res.StatusCode >= 500:
		// It may come after the server (or a proxy's upstream)
		// published: unknown, so the retry says it may be a repeat.
		return err
	case res.StatusCode == http.StatusRequestTimeout:
		return &core.NotSent{Err: err}
	case res.StatusCode/100 == 3:
		where := "nowhere"
		if loc, lerr := res.Location(); lerr == nil {
			where = core.ShownURL(loc.String()) // without a query, which may hold a secret
		}
		return &core.Permanent{Err: fmt.Errorf("ntfy: %s: the server redirects the publish to %s, which is not followed: set the server URL to where it points", res.Status, where)}
	}
	return &core.Permanent{Err: err}
}

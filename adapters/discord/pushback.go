package discord

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/peek"
	"github.com/askbridge/askbridge/adapters/internal/retryafter"
)

// pushback is what Discord's answer to one request said about waiting,
// recorded by the adapter's transport (rewrite) for the error path
// (classify). discordgo reads a 429's wait from its JSON body alone and
// its errors carry no response headers, so without this a 429 from
// Cloudflare (an HTML page while an invalid-request ban holds) came back
// as a JSON syntax error, of unknown outcome, its Retry-After unread.
//
// One pushback belongs to one SDK call (watch), reached through that
// call's request context, never shared between requests: the transport
// writes it in the calling goroutine, before the SDK's call returns.
type pushback struct {
	// status is the answer's status when it named a wait or refused for
	// rate (a 429, or a 5xx with Retry-After); 0 otherwise.
	status int
	// after is the Retry-After header's wait (0 for none).
	after time.Duration
	// botWide is true for a 429 that holds back every request of the
	// bot, not one route's (botWide429).
	botWide bool
}

type pushbackKey struct{}

// watch returns ctx carrying a fresh pushback for the one SDK call to be
// made under it (with discordgo.WithContext), and that pushback.
func watch(ctx context.Context) (context.Context, *pushback) {
	p := &pushback{}
	return context.WithValue(ctx, pushbackKey{}, p), p
}

// notePushback records in the pushback r's context carries (if any)
// what resp says about waiting: every 429, and a 5xx that names a wait.
func notePushback(r *http.Request, resp *http.Response, now time.Time) {
	p, _ := r.Context().Value(pushbackKey{}).(*pushback)
	if p == nil || resp == nil {
		return
	}
	after := retryafter.Parse(resp.Header, now)
	if resp.StatusCode == http.StatusTooManyRequests || (resp.StatusCode >= 500 && after > 0) {
		p.status, p.after = resp.StatusCode, after
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		p.botWide = botWide429(resp)
	}
}

// maxPeek bounds how much of a 429's body is read for its "global" flag.
const maxPeek = 64 << 10

// botWide429 reports whether a 429 holds back the whole bot rather than
// one route. Discord marks its global limit with X-RateLimit-Global or
// X-RateLimit-Scope "global", and a route's or a resource's with scope
// "user" or "shared"; without a scope, the body's "global" says which.
// A 429 that says neither (Cloudflare's HTML page while it bans the IP
// for too many invalid requests, or a JSON notice of that ban) comes
// from none of Discord's route limits: it holds back everything. The
// body read is put back for the SDK.
func botWide429(resp *http.Response) bool {
	h := resp.Header
	switch scope := h.Get("X-RateLimit-Scope"); {
	case h.Get("X-RateLimit-Global") != "", scope == "global":
		return true
	case scope != "":
		return false
	case resp.Body == nil:
		return true
	}
	b, err := peek.Body(&resp.Body, maxPeek)
	var body struct {
		Global *bool `json:"global"`
	}
	if err != nil || json.Unmarshal(b, &body) != nil || body.Global == nil {
		return true
	}
	return *body.Global
}

// limitedBotWide reports whether the answer was a 429 for the whole bot.
func (p *pushback) limitedBotWide() bool { return p.limited() && p.botWide }

// limited reports whether the answer was a 429: Discord (or Cloudflare
// in front of it) refused the request, so nothing was made.
func (p *pushback) limited() bool { return p != nil && p.status == http.StatusTooManyRequests }

// busy reports whether the answer was a 5xx that named a wait.
func (p *pushback) busy() bool { return p != nil && p.status >= 500 && p.after > 0 }

// serverBusy is the error of a request Discord answered with a 5xx that
// named a wait (Retry-After). Such an answer may come after the message
// was made, so it stays of unknown outcome: it is no core.RetryAfter,
// which core reads as nothing posted (the retry's card would then go out
// unflagged). Its wait is the drain's too (RetryWait): the retry comes no
// sooner than Discord asked.
type serverBusy struct {
	Status int
	After  time.Duration
	Err    error
}

func (e *serverBusy) Error() string {
	return fmt.Sprintf("discord answered %d asking for a wait of %s (outcome unknown): %v", e.Status, e.After, e.Err)
}
func (e *serverBusy) Unwrap() error { return e.Err }

// RetryWait is the wait Discord named, which core's drain keeps to.
func (e *serverBusy) RetryWait() time.Duration { return e.After }

package core

import (
	"context"
	"net/url"
	"strings"
	"time"
)

// Callbacks: a question may name a URL (its own, or its route's) that is
// told when it closes. The close's Change carries the webhook delivery
// (Next), so it is stored in the same atomic step as the close and drained
// from the outbox like a card update (law 4): at least once, under a key
// that stays the same across retries, so a receiver can drop repeats.

// MaxCallbackURLLen bounds a callback URL.
const MaxCallbackURLLen = 2048

// CallbackPrefixes are the URL prefixes an operator allows callbacks to
// (webhooks.allow). A URL is allowed when it has the scheme and host of a
// prefix and its path continues the prefix's path at a segment boundary:
// "https://hooks.example.com/askbridge" allows ".../askbridge" and
// ".../askbridge/deploys", not ".../askbridge-evil" nor another host whose
// name starts the same way.
type CallbackPrefixes []string

// Validate checks that every prefix is an absolute http(s) URL with a
// host and no user, query or fragment.
func (p CallbackPrefixes) Validate() error {
	for i, raw := range p {
		if _, err := parseCallback(raw); err != nil {
			return Errorf(CodeInvalid, "webhooks", "webhooks.allow[%d]: %s", i, ErrorMessage(err))
		}
	}
	return nil
}

// Check returns nil when raw is a callback URL the prefixes allow, and
// otherwise a CodeInvalid error that says why (naming field, the field
// that carried it).
func (p CallbackPrefixes) Check(field, raw string) error {
	const op = "callback"
	if len(raw) > MaxCallbackURLLen {
		return Errorf(CodeInvalid, op, "%s is %d bytes; the limit is %d", field, len(raw), MaxCallbackURLLen)
	}
	u, err := parseCallback(raw)
	if err != nil {
		return Errorf(CodeInvalid, op, "%s: %s", field, ErrorMessage(err))
	}
	for _, prefix := range p {
		if pu, err := parseCallback(prefix); err == nil && underPrefix(u, pu) {
			return nil
		}
	}
	if len(p) == 0 {
		return Errorf(CodeInvalid, op, "%s: callbacks are off on this server (no webhooks.allow configured)", field)
	}
	return Errorf(CodeInvalid, op, "%s %q is not under any URL prefix allowed by webhooks.allow", field, ShownURL(raw))
}

// parseCallback reads an absolute http(s) URL with a host, and no user
// info, fragment or dot segment (a fragment never reaches the receiver,
// and user info would put a credential in the log). Its refusals, as
// Check's, quote the URL as ShownURL shows it: they reach logs and the
// event log, and a query or user info may carry a receiver's secret.
func parseCallback(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, Errorf(CodeInvalid, "callback", "the callback URL does not parse as a URL")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, Errorf(CodeInvalid, "callback", "%q is not an http or https URL", ShownURL(raw))
	case u.Host == "" || u.Opaque != "":
		return nil, Errorf(CodeInvalid, "callback", "%q has no host", ShownURL(raw))
	case u.User != nil:
		return nil, Errorf(CodeInvalid, "callback", "%q carries a user name or password", ShownURL(raw))
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, Errorf(CodeInvalid, "callback", "%q has a fragment", ShownURL(raw))
	}
	// A receiver resolves "." and ".." segments, which would climb out
	// of the prefix the path seems to be under.
	for seg := range strings.SplitSeq(u.Path, "/") {
		if seg == "." || seg == ".." {
			return nil, Errorf(CodeInvalid, "callback", "%q has a . or .. path segment", ShownURL(raw))
		}
	}
	return u, nil
}

// underPrefix reports whether u is under prefix: same scheme and host
// (the port included), and a path that is the prefix's or continues it
// after a "/". A prefix with a query allows only that exact query.
func underPrefix(u, prefix *url.URL) bool {
	if u.Scheme != prefix.Scheme || !strings.EqualFold(u.Host, prefix.Host) {
		return false
	}
	if prefix.RawQuery != "" && u.RawQuery != prefix.RawQuery {
		return false
	}
	pp, up := prefix.EscapedPath(), u.EscapedPath()
	if pp == "" || pp == "/" {
		return true
	}
	rest, ok := strings.CutPrefix(up, pp)
	return ok && (rest == "" || strings.HasSuffix(pp, "/") || rest[0] == '/')
}

// callbackOf is the callback URL a question asked with in on route gets
// under cfg:
// the ask's own, or else the route's, checked against the allowed
// prefixes either way (a route's was checked at load, but the list may
// have changed since).
func callbackOf(cfg *Config, in AskInput, route Route) (string, error) {
	switch {
	case in.CallbackURL != "":
		return in.CallbackURL, cfg.Callbacks.Check("callback_url", in.CallbackURL)
	case route.CallbackURL != "":
		return route.CallbackURL, cfg.Callbacks.Check("routes."+route.Name+".callback_url", route.CallbackURL)
	}
	return "", nil
}

// ShownURL is a callback URL as the event log and errors show it: its
// scheme, host and first path segment, without the rest of the path, the
// query, fragment or user info, where receivers commonly put a token of
// their own (a query's ?token=, a chat's /api/webhooks/<id>/<token>, a
// workflow tool's /hooks/catch/<account>/<secret>). The event log is read
// with a read token, which must not carry the power to post to an
// agent's receiver.
func ShownURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a callback URL that does not parse)"
	}
	path := u.EscapedPath()
	if first, rest, more := strings.Cut(strings.TrimPrefix(path, "/"), "/"); more && rest != "" {
		path = "/" + first + "/…"
	}
	return u.Scheme + "://" + u.Host + path
}

// WebhookKey is the key of question id's close webhook: the same on every
// attempt, so it is the event id a receiver drops repeats by. A question
// closes once, so it has at most one.
func WebhookKey(id QuestionID) string { return string(id) + "/closed" }

// webhookDelivery is the delivery that tells n's callback URL it closed.
func webhookDelivery(n *Question, now time.Time) Delivery {
	return Delivery{Key: WebhookKey(n.ID), Kind: DeliverWebhook, Surface: SurfaceWebhook, Room: n.CallbackURL,
		QuestionID: n.ID, Route: n.Route, CreatedAt: now}
}

// Caller carries webhook deliveries: Call sends the closed question q to
// d.Room (its callback URL) under event id d.Key. Its errors mean what a
// Courier's do: RetryAfter for a receiver that asked to wait, Permanent
// for one that will never take it, anything else is retried with backoff.
// [Service.DeliverOne] hands a webhook delivery to a Courier that is also
// a Caller (core/loops drains the webhook outbox through one).
type Caller interface {
	Call(ctx context.Context, q *Question, d Delivery) error
}

package webhook

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/askbridge/askbridge/core"
)

// MinSecretLen is the shortest secret a webhook is signed with, as the
// README's webhooks.secret asks.
const MinSecretLen = 16

// Keys choose the secret each webhook is signed with, by who set its
// receiver up: a callback URL that is its route's own (routes.*.
// callback_url) is signed with the route's secret, any other (one the ask
// named) with the asking agent's token's; either falls back to Default.
// A receiver thus holds the one secret of whoever pointed askbridge at it.
type Keys struct {
	Default []byte
	Routes  map[string]RouteKey     // by route name
	Tokens  map[core.AgentID][]byte // by token (agent) name
}

// RouteKey is a route's callback URL and the secret its webhooks are
// signed with (nil: Keys.Default).
type RouteKey struct {
	URL    string
	Secret []byte
}

// For returns the secret of q's webhook to url. Whether url is the
// route's own is read from the route as q was asked under
// (Question.AskedCallbackURL), not as configured now: a reload that
// moved the route's callback_url must not sign q's webhook to the old
// receiver with another's secret, nor an agent's own URL, now also the
// route's, with the route's.
func (k *Keys) For(q *core.Question, url string) ([]byte, error) {
	r, configured := k.Routes[q.Route]
	own, pinned := q.AskedCallbackURL()
	if !pinned {
		own = r.URL // asked before questions kept their route
	}
	switch {
	case own != "" && own == url:
		if configured && len(r.Secret) > 0 {
			return r.Secret, nil
		}
	default:
		if s := k.Tokens[q.Agent]; len(s) > 0 {
			return s, nil
		}
	}
	if len(k.Default) > 0 {
		return k.Default, nil
	}
	return nil, errors.New("webhook: no secret to sign with (webhooks.secret is not set)")
}

// check refuses keys that could not sign what allow lets through, when
// the sender is made or reloaded rather than when a webhook is due: with
// callbacks allowed there must be a Default (a callback without a route
// or token secret of its own falls back to it), and no secret given may
// be short. Errors name the secret, never its value.
func (k *Keys) check(allow core.CallbackPrefixes) error {
	if len(allow) > 0 && len(k.Default) == 0 {
		return errors.New("webhook: callbacks are allowed but there is no secret to sign them with (the default secret is empty)")
	}
	short := func(s []byte) bool { return len(s) > 0 && len(s) < MinSecretLen }
	if short(k.Default) {
		return fmt.Errorf("webhook: the default secret is shorter than %d bytes", MinSecretLen)
	}
	for _, name := range slices.Sorted(maps.Keys(k.Routes)) {
		if short(k.Routes[name].Secret) {
			return fmt.Errorf("webhook: the secret of route %q is shorter than %d bytes", name, MinSecretLen)
		}
	}
	for _, agent := range slices.Sorted(maps.Keys(k.Tokens)) {
		if short(k.Tokens[agent]) {
			return fmt.Errorf("webhook: the secret of token %q is shorter than %d bytes", agent, MinSecretLen)
		}
	}
	return nil
}

package webhook

import (
	"errors"

	"github.com/askbridge/askbridge/core"
)

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

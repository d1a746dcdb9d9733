package console

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"

	"github.com/askbridge/askbridge/adapters/internal/guard"
)

// OIDC configures sign-in through the company's OpenID Connect provider,
// beside token sign-in: the authorization code flow with PKCE, its state
// and nonce checked, the ID token's signature, issuer, audience and
// expiry verified by go-oidc. The session then belongs to a configured
// person, and the console decides as that person (decider).
type OIDC struct {
	// Issuer is the provider's issuer URL; its discovery document is read
	// on the first sign-in (and again after a failure), not at start, so
	// an unreachable provider never keeps the console from serving.
	Issuer       string
	ClientID     string
	ClientSecret string
	// RedirectURL is this console's /oidc/callback as the browser reaches
	// it, registered with the provider.
	RedirectURL string
	// Scopes are asked for beside openid; nil asks for email and profile.
	Scopes []string
	// PersonClaim names the ID token claim that says who signed in;
	// "" is "email", which counts only with email_verified true.
	PersonClaim string
	// GroupClaim names the claim listing the person's groups; "" is
	// "groups". Roles maps a group to a console role; of several, the
	// strongest applies; DefaultRole is for someone in no mapped group
	// ("" refuses them).
	GroupClaim  string
	Roles       map[string]Role
	DefaultRole Role
	// People finds the configured person a claim's value names.
	People People
	// Label is the sign-in button's text; "" is "Sign in with your
	// company account".
	Label string
	// Client, when set, is the HTTP client for the provider.
	Client *http.Client
}

// People looks up configured people for OIDC sign-in.
type People interface {
	// ByClaim returns the person whose configured value of the person
	// claim is value ("" and false for nobody).
	ByClaim(value string) (person string, ok bool)
	// Exists reports whether person is still configured, so a session
	// outlives no person's removal.
	Exists(person string) bool
}

// oidcPrefix names an identity provider's person among console
// accounts: a token name never starts with it (the program refuses one
// that does), so no token can be taken for a person who signed in.
const oidcPrefix = "oidc:"

// viaOIDC marks a session made by the identity provider.
const viaOIDC = "oidc"

// oidcCookie carries a sign-in's state from /oidc/login to the callback,
// so that a callback this browser did not start is refused (login CSRF).
// It is Lax, unlike the session's: the provider's redirect back to us is
// a cross-site navigation, on which a Strict cookie is not sent.
const oidcCookie = "askbridge_oidc"

// oidcLife is how long a started sign-in may take at the provider.
const oidcLife = 10 * time.Minute

// oidcFlow is what a started sign-in keeps in the store under its
// state's digest, for whichever replica the callback reaches.
type oidcFlow struct {
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier"`
	Next     string `json:"next"`
}

// idp is the console's side of the provider: the configuration, checked,
// and the provider's discovery, made once it succeeds.
type idp struct {
	cfg OIDC
	mu  sync.Mutex
	p   *oidc.Provider
	// discovering shares one discovery among the sign-ins that need the
	// provider while it is on its way.
	discovering singleflight.Group
}

func newIDP(c OIDC) (*idp, error) {
	if c.Issuer == "" || c.ClientID == "" || c.RedirectURL == "" || c.People == nil {
		return nil, errors.New("console: OIDC needs an issuer, a client id, a redirect URL and People")
	}
	if u, err := url.Parse(c.RedirectURL); err != nil || u.Path != "/oidc/callback" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("console: the OIDC redirect URL %q is not this console's /oidc/callback", c.RedirectURL)
	}
	for _, g := range slices.Sorted(maps.Keys(c.Roles)) { // the same refusal every time
		if r := c.Roles[g]; roleRank(r) == 0 {
			return nil, fmt.Errorf("console: OIDC group %q maps to %q, not observer, operator or admin", g, r)
		}
	}
	if c.DefaultRole != "" && roleRank(c.DefaultRole) == 0 {
		return nil, fmt.Errorf("console: the OIDC default role %q is not observer, operator or admin", c.DefaultRole)
	}
	if c.PersonClaim == "" {
		c.PersonClaim = "email"
	}
	if c.GroupClaim == "" {
		c.GroupClaim = "groups"
	}
	if c.Scopes == nil {
		c.Scopes = []string{"email", "profile"}
	}
	if c.Label == "" {
		c.Label = "Sign in with your company account"
	}
	if c.Client == nil {
		c.Client = &http.Client{Timeout: 15 * time.Second}
	}
	return &idp{cfg: c}, nil
}

// roleRank orders the console roles a group may grant; 0 is none of them.
func roleRank(r Role) int {
	switch r {
	case RoleObserver:
		return 1
	case RoleOperator:
		return 2
	case RoleAdmin:
		return 3
	}
	return 0
}

// provider discovers the provider once it has succeeded. Sign-ins that
// need it meanwhile share one discovery, each waiting no longer than its
// own request, so an unreachable provider costs each one timeout, not one
// per sign-in ahead of it. The discovery's context outlives the request
// that started it: go-oidc fetches the signing keys with it later.
func (d *idp) provider(ctx context.Context) (*oidc.Provider, error) {
	d.mu.Lock()
	p := d.p
	d.mu.Unlock()
	if p != nil {
		return p, nil
	}
	bg := oidc.ClientContext(context.WithoutCancel(ctx), d.cfg.Client)
	found := d.discovering.DoChan("", func() (any, error) {
		p, err := oidc.NewProvider(bg, d.cfg.Issuer)
		if err == nil {
			d.mu.Lock()
			d.p = p
			d.mu.Unlock()
		}
		return p, err
	})
	select {
	case r := <-found:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*oidc.Provider), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (d *idp) oauth(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: d.cfg.ClientID, ClientSecret: d.cfg.ClientSecret, RedirectURL: d.cfg.RedirectURL,
		Endpoint: p.Endpoint(), Scopes: append([]string{oidc.ScopeOpenID}, d.cfg.Scopes...)}
}

// flowCookie sets (life > 0) or clears (life < 0) the sign-in's state
// cookie, sent only to /oidc/.
func flowCookie(w http.ResponseWriter, r *http.Request, state string, life time.Duration) {
	c := &http.Cookie{Name: oidcCookie, Value: state, Path: "/oidc/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: secure(r), MaxAge: int(life / time.Second)}
	if life < 0 {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
}

// errorCode is a provider's error code fit to show: OAuth's codes are
// short words of letters and underscores (RFC 6749, section 4.1.2.1);
// anything else is not repeated.
func errorCode(e string) string {
	if len(e) > 64 || strings.TrimFunc(e, func(c rune) bool { return c == '_' || (c >= 'a' && c <= 'z') }) != "" {
		return "an error it did not name"
	}
	return e
}

func oidcFlowKey(state string) string {
	sum := sha256.Sum256([]byte(state))
	return "console:oidc:" + hex.EncodeToString(sum[:])
}

// oidcLogin starts a sign-in: a fresh state, nonce and PKCE verifier,
// kept in the store for the callback, and the browser sent to the
// provider.
func (s *Server) oidcLogin(w http.ResponseWriter, r *http.Request) {
	next := localPath(r.URL.Query().Get("next"))
	// Each start writes to the store, so starts count against the client's
	// sign-in budget, as token sign-ins do.
	if wait, err := s.signInWait(r); err != nil {
		s.internal(w, r, err)
		return
	} else if wait > 0 {
		w.Header().Set("Retry-After", guard.RetryAfter(wait))
		s.signInPage(w, r, http.StatusTooManyRequests, "Too many sign-in attempts from this address. Try again in a minute.", next)
		return
	}
	p, err := s.oidc.provider(r.Context())
	if err != nil {
		s.log.Error().Err(err).Msg("console: the identity provider's discovery failed")
		s.signInPage(w, r, http.StatusBadGateway, "The company sign-in is not reachable just now; try again, or sign in with a token.", next)
		return
	}
	state, flow := randomToken(), oidcFlow{Nonce: randomToken(), Verifier: oauth2.GenerateVerifier(), Next: next}
	raw, _ := json.Marshal(flow) // plain strings: no error
	if err := s.values.SetValueFor(r.Context(), oidcFlowKey(state), string(raw), oidcLife); err != nil {
		s.internal(w, r, err)
		return
	}
	flowCookie(w, r, state, oidcLife)
	http.Redirect(w, r, s.oidc.oauth(p).AuthCodeURL(state, oidc.Nonce(flow.Nonce), oauth2.S256ChallengeOption(flow.Verifier)), http.StatusFound)
}

// oidcCallback finishes a sign-in. Every refusal changes nothing and
// shows the sign-in page with the reason; the state is spent at the
// first callback, right or wrong, so none can be replayed.
func (s *Server) oidcCallback(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	state := q.Get("state")
	refuse := func(status int, why string) {
		flowCookie(w, r, "", -1)
		s.signInPage(w, r, status, why, "/")
	}
	c, err := r.Cookie(oidcCookie)
	if err != nil || state == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(state)) != 1 {
		refuse(http.StatusForbidden, "This sign-in was not started in this browser, so it was refused. Sign in again.")
		return
	}
	// A state this console never stored costs a read and writes nothing;
	// a stored one is spent once, atomically, on whichever replica the
	// first callback reaches.
	key := oidcFlowKey(state)
	raw, err := s.values.Value(ctx, key)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	first := false
	if raw != "" {
		if first, err = s.values.Once(ctx, key+":spent", oidcLife); err != nil {
			s.internal(w, r, err)
			return
		}
		_ = s.values.DeleteValue(ctx, key)
	}
	var flow oidcFlow
	if !first || json.Unmarshal([]byte(raw), &flow) != nil {
		refuse(http.StatusForbidden, "This sign-in has been used or has expired, so it was refused. Sign in again.")
		return
	}
	if e := q.Get("error"); e != "" {
		refuse(http.StatusForbidden, "The company sign-in refused: "+errorCode(e)+".")
		return
	}
	acct, why := s.oidcAccountOf(ctx, q.Get("code"), flow)
	if why != "" {
		refuse(http.StatusForbidden, why)
		return
	}
	if err := s.startSession(w, r, acct, viaOIDC); err != nil {
		s.internal(w, r, err)
		return
	}
	flowCookie(w, r, "", -1)
	// A page, not a redirect: the browser came here from the provider,
	// and a redirect would carry on that cross-site navigation. The Lax
	// session cookie would be sent on it, but the page's own navigation
	// is same-site, so the sign-in holds whatever the cookie's SameSite.
	s.render(w, r, http.StatusOK, "signedin", map[string]any{"Next": flow.Next, "Title": "Signed in"})
}

// oidcAccountOf exchanges the code (with the PKCE verifier) for tokens,
// verifies the ID token and its nonce, and finds the person and role it
// names. A refusal comes back as the words to show, never the token.
func (s *Server) oidcAccountOf(ctx context.Context, code string, flow oidcFlow) (Account, string) {
	const failed = "The company sign-in could not be completed, so nothing changed. Sign in again."
	d := s.oidc
	p, err := d.provider(ctx)
	if err != nil {
		s.log.Error().Err(err).Msg("console: the identity provider's discovery failed")
		return Account{}, failed
	}
	ctx = oidc.ClientContext(ctx, d.cfg.Client)
	tok, err := d.oauth(p).Exchange(ctx, code, oauth2.VerifierOption(flow.Verifier))
	if err != nil {
		s.log.Warn().Err(err).Msg("console: the identity provider refused the code")
		return Account{}, failed
	}
	rawID, _ := tok.Extra("id_token").(string)
	id, err := p.Verifier(&oidc.Config{ClientID: d.cfg.ClientID, Now: s.now}).Verify(ctx, rawID)
	if err != nil {
		s.log.Warn().Err(err).Msg("console: an ID token was refused")
		return Account{}, "The company sign-in's token did not check out (signature, issuer, audience or expiry), so it was refused."
	}
	if subtle.ConstantTimeCompare([]byte(id.Nonce), []byte(flow.Nonce)) != 1 {
		return Account{}, "The company sign-in's token was not made for this sign-in (its nonce differs), so it was refused."
	}
	var claims map[string]any
	if err := id.Claims(&claims); err != nil {
		return Account{}, failed
	}
	value, _ := claims[d.cfg.PersonClaim].(string)
	if d.cfg.PersonClaim == "email" {
		// Some providers send the flag as the string "true".
		if v := claims["email_verified"]; v != true && v != "true" {
			return Account{}, "The company sign-in does not vouch for that email address (email_verified), so it was refused."
		}
		value = strings.ToLower(value)
	}
	person, ok := d.cfg.People.ByClaim(value)
	if value == "" || !ok {
		return Account{}, "You signed in at the company, but askbridge's configuration names no person for that account. Ask an admin to add you."
	}
	role := d.cfg.DefaultRole
	for _, g := range groupsOf(claims[d.cfg.GroupClaim]) {
		if r, ok := d.cfg.Roles[g]; ok && roleRank(r) > roleRank(role) {
			role = r
		}
	}
	if roleRank(role) == 0 {
		return Account{}, "None of your groups at the company may use the console. Ask an admin for access."
	}
	return Account{Name: oidcPrefix + person, Role: role, Person: person, Stamp: "oidc"}, ""
}

// groupsOf reads a group claim: a list of strings, or one string.
func groupsOf(v any) []string {
	switch g := v.(type) {
	case string:
		return []string{g}
	case []any:
		out := make([]string, 0, len(g))
		for _, x := range g {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// oidcAccount is the account of a live session made by the provider: its
// person must still be configured and OIDC still on; its role is the one
// the groups granted at sign-in, for as long as the session lives.
func (s *Server) oidcAccount(sess session) (Account, bool) {
	if s.oidc == nil || sess.Person == "" || !s.oidc.cfg.People.Exists(sess.Person) || roleRank(sess.Role) == 0 {
		return Account{}, false
	}
	return Account{Name: oidcPrefix + sess.Person, Role: sess.Role, Person: sess.Person, Stamp: sess.Stamp}, true
}

// oidcSignIn is the sign-in page's link to the provider, "" without one.
func (s *Server) oidcSignIn(next string) (label, href string) {
	if s.oidc == nil {
		return "", ""
	}
	return s.oidc.cfg.Label, "/oidc/login?" + url.Values{"next": {localPath(next)}}.Encode()
}

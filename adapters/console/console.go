// Package console is askbridge's operator inbox: a web page, served on the
// API's listener, where people see what agents are waiting on and answer
// it. The inbox is a page of folded rows read from the store a page at a
// time (core.Service.OpenPage); a row unfolds to answer in place. Pages
// are rendered on the server with html/template; a little plain
// JavaScript follows the event log so rows change in place, and posts an
// inbox answer with fetch so the person stays in the inbox (every form
// also works without it). What a person types into an answer is kept in
// their tab's sessionStorage, never on the server, so that a session that
// idles out before they send it loses nothing (assets/kept.js). A choice
// on a hard-to-reverse question is confirmed once before it is recorded
// (confirm.go). Every answer goes through core.Service like every other
// surface's.
//
// Sign-in exchanges a token for a session kept in the store (so it works on
// every replica and outlives restarts) and named by an HttpOnly,
// SameSite=Lax cookie (session.go's setCookie says why Lax); the token
// itself never reaches page script. A
// company's OpenID Connect provider may sign people in too (oidc.go); the
// session is then a configured person's. Every state change needs the
// session's CSRF token and a same-origin request.
// Every asset is embedded, linked by a name that carries its content's
// hash (assets.go), and the Content-Security-Policy allows only this
// origin and no inline script.
package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/internal/access"
	"github.com/askbridge/askbridge/core"
)

// Role is what a signed-in token may do on the console: the API's roles
// (adapters/internal/access), one type for both.
type Role = access.Role

const (
	// RoleObserver sees everything and answers nothing.
	RoleObserver = access.RoleObserver
	// RoleOperator answers, declines and withdraws.
	RoleOperator = access.RoleOperator
	// RoleAdmin does what an operator does.
	RoleAdmin = access.RoleAdmin
	// RoleAgent tokens are for agents; the console refuses them.
	RoleAgent = access.RoleAgent
)

// Account is a token as the console sees it: its name (the decider id),
// its role, and a stamp that changes whenever its secret does, so a
// session ends when its token is replaced.
type Account struct {
	Name  string
	Role  Role
	Stamp string
	// Person is set for an account the identity provider signed in
	// (oidc.go): the configured person, whose id is Name, "oidc:<person>".
	Person string
}

// Tokens is how the console knows who signs in; the program owns the
// tokens and implements it.
type Tokens interface {
	// BySecret returns the account whose secret is presented.
	BySecret(secret string) (Account, bool)
	// ByName returns the account of that name as configured now, so a
	// session outlives neither its token's removal nor a change of role.
	ByName(name string) (Account, bool)
}

// DefaultIdle is how long a session lasts without use when Options give
// no idle time.
const DefaultIdle = 12 * time.Hour

// DefaultMaxAge is how long a session lasts from its sign-in, used or
// not, when Options give no maximum age.
const DefaultMaxAge = 24 * time.Hour

// Options configure a Server.
type Options struct {
	Tokens Tokens
	// Values keeps sessions and last visits; nil takes the service's.
	Values core.Values
	// Idle is how long an unused session lives; zero means DefaultIdle.
	Idle time.Duration
	// MaxAge is how long a session lives from its sign-in, however often
	// it is used; zero means DefaultMaxAge. Then its person signs in
	// again: what an identity provider's groups grant is read afresh, and
	// a person it no longer lets in is out.
	MaxAge time.Duration
	// Log receives internal errors only; never tokens or people's text.
	Log zerolog.Logger
	// Now is the clock for ages and last visits; nil is the wall clock.
	Now func() time.Time
	// SignIns, when set, bounds sign-in attempts per client address to
	// SignInLimit, in the store, so the bound holds across replicas.
	// Tokens are long and random; this keeps guessing slow all the same.
	SignIns core.Budget
	// TrustedProxies are the reverse proxies in front of the console
	// (ParseProxies reads a list). A request from one of them counts
	// against the budget of the client its X-Forwarded-For names; from
	// anywhere else the header is the client's own and is ignored. Empty,
	// every request is its peer's. Every address in these prefixes is
	// believed about the header, so they should hold the proxies alone,
	// not a network that clients share.
	TrustedProxies []netip.Prefix
	// OIDC, when set, offers sign-in through an OpenID Connect provider
	// beside tokens (oidc.go).
	OIDC *OIDC
}

// SignInLimit is how many sign-in attempts one client address may make:
// thirty at once, then one every two seconds. Every attempt counts, right
// or wrong, so a right token is no test of whether the limit applies.
// Behind a reverse proxy that is not among Options.TrustedProxies every
// browser shares the proxy's address, which is why the burst is a team's
// morning of sign-ins, not one person's.
var SignInLimit = core.Limit{Rate: 30, Per: time.Minute, Burst: 30}

// Server is the console as an http.Handler.
type Server struct {
	svc    *core.Service
	tokens Tokens
	values core.Values
	idle   time.Duration
	maxAge time.Duration // from sign-in, used or not
	log    zerolog.Logger
	now    func() time.Time
	pages  *template.Template
	mux    *http.ServeMux
	origin *http.CrossOriginProtection
	assets *assets

	// eventPoll is how often a stream re-reads the log; keepAlive how
	// long it may stay silent before a comment keeps proxies from
	// closing it.
	eventPoll time.Duration
	keepAlive time.Duration

	// tailMu guards tail, the highest event seq seen so far: pages start
	// their stream there, so reading it never rescans the whole log.
	tailMu sync.Mutex
	tail   int64

	signIns core.Budget    // see Options.SignIns
	proxies []netip.Prefix // see Options.TrustedProxies
	oidc    *idp           // see Options.OIDC; nil: tokens only

	draining context.Context
	drain    context.CancelFunc
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// New returns the console over svc.
func New(svc *core.Service, opts Options) (*Server, error) {
	if opts.Tokens == nil {
		return nil, errors.New("console: Tokens is required")
	}
	if opts.Idle < 0 {
		return nil, errors.New("console: the idle time must not be negative")
	}
	if opts.Idle == 0 {
		opts.Idle = DefaultIdle
	}
	if opts.MaxAge < 0 {
		return nil, errors.New("console: the maximum session age must not be negative")
	}
	if opts.MaxAge == 0 {
		opts.MaxAge = DefaultMaxAge
	}
	if opts.Values == nil {
		opts.Values = svc.Values()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	sub, err := fs.Sub(assetFS, "assets")
	if err != nil {
		return nil, err
	}
	files, err := loadAssets(sub)
	if err != nil {
		return nil, fmt.Errorf("console: assets: %w", err)
	}
	// now is when a page was drawn, on the clock its relative times
	// were worded by (times.js words them again as time passes).
	now := func() string { return iso(opts.Now()) }
	check := func() int64 { return streamCheck.Milliseconds() }
	pages, err := template.New("").Funcs(funcs).Funcs(template.FuncMap{"asset": files.url, "now": now, "streamCheck": check}).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("console: templates: %w", err)
	}
	s := &Server{
		svc: svc, tokens: opts.Tokens, values: opts.Values, idle: opts.Idle, maxAge: opts.MaxAge, log: opts.Log, now: opts.Now,
		signIns:   opts.SignIns,
		proxies:   opts.TrustedProxies,
		pages:     pages,
		mux:       http.NewServeMux(),
		origin:    http.NewCrossOriginProtection(),
		assets:    files,
		eventPoll: 250 * time.Millisecond,
		keepAlive: 15 * time.Second,
	}
	if opts.OIDC != nil {
		if s.oidc, err = newIDP(*opts.OIDC); err != nil {
			return nil, err
		}
	}
	s.draining, s.drain = context.WithCancel(context.Background())
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	s.mux.HandleFunc("GET /{$}", s.inbox)
	s.mux.HandleFunc("POST /signin", s.signIn)
	s.mux.HandleFunc("POST /signout", s.signedIn(s.signOut))
	s.mux.HandleFunc("GET /q/{id}", s.signedIn(s.question))
	s.mux.HandleFunc("GET /q/{id}/part", s.signedIn(s.questionPart))
	s.mux.HandleFunc("GET /rows/{id}", s.signedIn(s.row))
	s.mux.HandleFunc("POST /q/{id}/answer", s.signedIn(s.answer))
	s.mux.HandleFunc("POST /q/{id}/decline", s.signedIn(s.decline))
	s.mux.HandleFunc("POST /q/{id}/cancel", s.signedIn(s.cancel))
	s.mux.HandleFunc("GET /standing", s.signedIn(s.standings))
	s.mux.HandleFunc("POST /standing/{id}/revoke", s.signedIn(s.revokeStanding))
	s.mux.HandleFunc("GET /stream", s.signedIn(s.stream))
	s.mux.HandleFunc("GET /closed", s.signedIn(s.closed))
	s.mux.HandleFunc("GET /closed.csv", s.signedIn(s.exportClosed))
	s.mux.HandleFunc("GET /people", s.signedIn(s.people))
	if s.oidc != nil {
		s.mux.HandleFunc("GET /oidc/login", s.oidcLogin)
		s.mux.HandleFunc("GET /oidc/callback", s.oidcCallback)
	}
	s.mux.HandleFunc("GET /assets/{file}", s.serveAsset)
	s.mux.HandleFunc("/", s.notFound)
}

// Drain ends every event stream, now and for requests still to come, so a
// shutdown does not wait for them; pages reconnect, to another replica if
// need be, and catch up from their last event.
func (s *Server) Drain() { s.drain() }

// csp allows this origin alone: no inline script or style, no frames, no
// other site's assets, forms posting only here.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// ServeHTTP sets the security headers every response carries, refuses
// cross-origin state changes, and routes. Nothing is kept by a cache
// unless it says otherwise (an asset, by a name that changes with its
// bytes): not a page of questions, and not a redirect or a bare error
// either, some of which set or clear a session's cookie.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if err := s.origin.Check(r); err != nil {
		s.forbidden(w, r, "This request came from another site, so it was refused and nothing changed.")
		return
	}
	s.mux.ServeHTTP(w, r)
}

// secure reports whether the browser reached us over TLS, directly or
// through a proxy that says so. Believing the proxy header is safe here
// because all it does is make the cookie stricter: a forged header can only
// keep the cookie off plain HTTP.
func secure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	return r.Header.Get("X-Forwarded-Proto") == "https"
}

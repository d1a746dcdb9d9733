// Package httpapi is askbridge's HTTP API for agents and operators: ask a
// question, long-poll until it closes, answer, decline, cancel, end a run,
// follow the event log as Server-Sent Events, read digests, the prompt
// directive and how long closed questions are kept, and serve the MCP
// door that `askbridge mcp` reaches the bridge through. It translates
// between HTTP and core; every change of a question goes through
// core.Service.
//
// Everything under /v1 needs a bearer token; /healthz and /readyz do not.
// Errors are {"error":{"code","message"}} with core's codes mapped to
// statuses (invalid 400, not_found 404, forbidden 403, conflict 409,
// internal 500), plus 401 for a missing or unknown token, 429 with
// Retry-After for a client address that has presented too many unknown
// ones (Admit) and for a wait past its question's bound (waiters.go),
// 405 for a method a route does not take, 413 for a body
// over MaxBodyBytes and 415 for a body that is not JSON and was sent as
// something else (media.go). The wire types are in package client, which
// the server shares.
package httpapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/internal/access"
	"github.com/askbridge/askbridge/adapters/internal/guard"
	"github.com/askbridge/askbridge/adapters/internal/inhand"
	"github.com/askbridge/askbridge/adapters/internal/waitcount"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/directive"
	"github.com/askbridge/askbridge/internal/membudget"
)

// Defaults for Options' zero values, and for a wait that names no
// timeout. DefaultWait is the Go client's poll (client.DefaultPollTimeout)
// for the reason that one has: a caller that names no timeout (curl, a
// client in another language) sits behind the same proxies, whose idle
// timeouts (30 s for some, 60 s for most) would cut a wait held as long.
const (
	DefaultMaxWait = 5 * time.Minute
	DefaultWait    = client.DefaultPollTimeout
)

// Options configure a Server.
type Options struct {
	// Tokens are the bearer tokens the API accepts while the service's
	// configuration carries none of its own (core.Config.Tokens, a *Ring
	// from NewRing); once it does, the API takes those, which a reload
	// puts in force with the routes in one step.
	Tokens []Token
	// Log receives one line per request (method, path, status, duration,
	// token name) and the causes of internal errors. Never secrets, never
	// bodies.
	Log zerolog.Logger
	// MaxWait caps ?timeout on a wait; zero means DefaultMaxWait.
	MaxWait time.Duration
	// MaxWaitsPerQuestion bounds the waits parked on one question at
	// once on this server (waiters.go); zero means
	// DefaultMaxWaitsPerQuestion.
	MaxWaitsPerQuestion int
	// Extras are the operator's own directives, appended by GET
	// /v1/directive to the agents they match.
	Extras []directive.Extra
	// Unavailable, when set, is the store's word on whether an error is
	// a failover's or an unreachable server's (store/redis's Unavailable):
	// such errors are answered 503 with Retry-After instead of 500. Errors
	// marked core.ErrUnavailable are answered so without it.
	Unavailable func(error) bool
	// Guesses keeps the budgets of wrong tokens per client address (the
	// store, as core.Budget, so replicas share them; the console's
	// sign-ins spend from the same store). Only a wrong token spends, at
	// WrongTokenLimit; a client out of them is answered 429 with
	// Retry-After, on every door that checks tokens through Admit, until
	// it has one again. Nil keeps them in this process alone.
	Guesses core.Budget
	// TrustedProxies are the reverse proxies in front of the API (the
	// console's, console.ParseProxies): a request from one counts against
	// the budget of the client its X-Forwarded-For names. Empty, every
	// request is its peer's.
	TrustedProxies []netip.Prefix
	// HostDeclines keeps, for the question's agent, its MCP host's
	// declines of task forms: the program hands it the MCP door's own
	// (mcp.ServiceBackend), so `askbridge mcp` and /mcp keep a decline
	// under one key for one time. Nil, the routes that keep and read them
	// are not served, and `askbridge mcp` asks a declined form again.
	HostDeclines func(core.AgentID) HostDeclines
}

// WrongTokenLimit is how many wrong bearer tokens one client address may
// present: thirty at once, then one every two seconds, as many as the
// console's sign-in attempts (console.SignInLimit). Right ones spend
// nothing.
var WrongTokenLimit = core.Limit{Rate: 30, Per: time.Minute, Burst: 30}

// wrongTokenKey names the budget of wrong bearer tokens, one for every
// door that takes the API's tokens.
const wrongTokenKey = "auth:bearer:"

// Validate checks the options as New will, so that a program can report a
// bad configuration as an error rather than a panic.
func (o Options) Validate() error {
	if err := access.Validate(o.Tokens); err != nil {
		return fmt.Errorf("httpapi: %w", err)
	}
	if o.MaxWait < 0 {
		return errors.New("httpapi: max wait must not be negative")
	}
	if o.MaxWaitsPerQuestion < 0 {
		return errors.New("httpapi: the most waits per question must not be negative")
	}
	if err := directive.ValidateExtras(o.Extras); err != nil {
		return fmt.Errorf("httpapi: %w", err)
	}
	return nil
}

// Server is the API as an http.Handler.
type Server struct {
	svc     *core.Service
	log     zerolog.Logger
	keys    *Keys
	maxWait time.Duration
	// waiting counts the waits parked on each question, at most
	// maxWaiters each (waiters.go).
	waiting    waitcount.Counts
	maxWaiters int
	// extras and digestOf change when the configuration is reloaded
	// (config.go).
	extras   atomic.Pointer[[]directive.Extra]
	digestOf atomic.Pointer[client.ConfigDigest]
	// unavailable is Options.Unavailable, or core.Unavailable alone.
	unavailable func(error) bool
	// api routes /v1; mux routes the probes and whatever Handle mounts.
	// Keeping them apart means a handler mounted at "/" never swallows an
	// unknown /v1 path, and 404 versus 405 under /v1 stays the API's own.
	api *http.ServeMux
	mux *http.ServeMux
	// mounted holds again the routes Handle mounts under /v1, for noRoute
	// alone: in mux a handler at "/" matches any method of their paths, so
	// only here does another method read as 405.
	mounted *http.ServeMux

	// eventPoll is how often a following events stream re-reads the log.
	eventPoll time.Duration
	// keepAlive is how long a following events stream may stay silent
	// before it sends a comment line to keep proxies from closing it.
	keepAlive time.Duration

	// draining ends when Drain is called: parked waits and events streams
	// end with it.
	draining context.Context
	drain    context.CancelFunc
	// taken counts the waits parked on connections taken over from
	// net/http: http.Server.Shutdown does not see those connections, so
	// Drain ends the waits and waits for their answers here; once
	// closed, it takes no more, and waits are then answered in their
	// handlers, at once.
	taken inhand.Group
	// reuse, once Listener is called, takes parked waits' connections back
	// to the server after their answers (reuse.go).
	reuse atomic.Pointer[reuseListener]
	// guesses bounds wrong tokens per client address (Admit).
	guesses *guard.Guesses
	// declines is Options.HostDeclines.
	declines func(core.AgentID) HostDeclines
}

// New returns the API over svc, or the error of opts' Validate. A program
// that checks its configuration at load calls Validate then, so a bad
// token list is reported before anything starts.
func New(svc *core.Service, opts Options) (*Server, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.MaxWait == 0 {
		opts.MaxWait = DefaultMaxWait
	}
	if opts.MaxWaitsPerQuestion == 0 {
		opts.MaxWaitsPerQuestion = DefaultMaxWaitsPerQuestion
	}
	s := &Server{
		svc:     svc,
		log:     opts.Log,
		maxWait: opts.MaxWait, maxWaiters: opts.MaxWaitsPerQuestion,
		unavailable: func(err error) bool {
			return core.Unavailable(err) || opts.Unavailable != nil && opts.Unavailable(err)
		},
		api:       http.NewServeMux(),
		mux:       http.NewServeMux(),
		mounted:   http.NewServeMux(),
		eventPoll: 250 * time.Millisecond,
		keepAlive: 15 * time.Second,
		declines:  opts.HostDeclines,
	}
	extras := append([]directive.Extra(nil), opts.Extras...)
	s.extras.Store(&extras)
	var err error
	if s.keys, err = access.NewKeys(opts.Tokens); err != nil {
		return nil, fmt.Errorf("httpapi: %w", err) // checked by Validate above
	}
	s.keys.Follow(svc.Tokens)
	budget := opts.Guesses
	if budget == nil {
		budget = membudget.New(svc.Now)
	}
	s.guesses = guard.NewGuesses(guard.Limiter{Budget: budget, Key: wrongTokenKey, Limit: WrongTokenLimit,
		Proxies: opts.TrustedProxies, Now: svc.Now}, func(err error) {
		s.log.Warn().Err(err).Msg("the budget of wrong tokens could not be read: the client is held a second")
	})
	s.draining, s.drain = context.WithCancel(context.Background())
	s.routes()
	return s, nil
}

// routes lists every route with the roles that may use it. Admin may use
// them all. Which questions a role sees is each handler's business (an
// agent sees only its own).
func (s *Server) routes() {
	s.v1("POST /v1/questions", "ask questions", s.ask, RoleAgent)
	s.v1("GET /v1/questions", "list questions", s.list, RoleOperator, RoleObserver)
	s.v1("GET /v1/questions/{id}", "read questions", s.get, RoleAgent, RoleOperator, RoleObserver)
	s.v1("GET /v1/questions/{id}/wait", "wait on questions", s.wait, RoleAgent)
	s.v1("POST /v1/questions/{id}/answer", "answer questions", s.answer, RoleOperator)
	s.v1("POST /v1/questions/{id}/decline", "decline questions", s.decline, RoleOperator)
	s.v1("POST /v1/questions/{id}/cancel", "cancel questions", s.cancel, RoleAgent, RoleOperator)
	s.v1("POST /v1/runs/{run_id}/end", "end runs", s.endRun, RoleAgent)
	s.mcpRoutes()
	s.v1("GET /v1/approvals/standing", "list standing approvals", s.listStanding, RoleOperator, RoleObserver)
	s.v1("POST /v1/approvals/standing/{id}/revoke", "revoke standing approvals", s.revokeStanding, RoleOperator)
	s.v1("GET /v1/events", "read events", s.events, RoleOperator, RoleObserver)
	s.v1("GET /v1/audit/export", "export the audit log", s.auditExport, RoleAdmin)
	s.v1("GET /v1/digest", "read digests", s.digest, RoleOperator, RoleObserver)
	s.v1("GET /v1/people", "read people", s.people, RoleOperator, RoleObserver)
	s.v1("GET /v1/directive", "read the directive", s.directive, RoleAgent, RoleOperator, RoleObserver)
	s.v1("GET /v1/retention", "read the retention", s.retention, RoleAgent, RoleOperator, RoleObserver)
	s.v1("GET /v1/config/digest", "read the configuration's digest", s.configDigest, RoleAdmin)
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /readyz", s.readyz)
	// Any other method on a probe is the API's 405, not whatever a
	// handler mounted at "/" (the console) would make of it.
	s.mux.HandleFunc("/healthz", probeMethod)
	s.mux.HandleFunc("/readyz", probeMethod)
}

// v1 registers an authenticated route that the given roles (and admin)
// may use, with a query string that parses whole (queryProblem) and
// names each parameter the route takes at most as often as it takes it,
// and with a value unless empty is one (paramProblem).
// Authentication itself happens in ServeHTTP for all of /v1.
func (s *Server) v1(pattern, action string, h http.HandlerFunc, roles ...Role) {
	s.api.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		tok := caller(r)
		if !mayUse(tok.Role, roles) {
			writeErrorStatus(w, http.StatusForbidden, core.CodeForbidden,
				fmt.Sprintf("a token with role %s may not %s", tok.Role, action))
			return
		}
		if err := queryProblem(r.URL.RawQuery); err != nil {
			s.fail(w, r, err)
			return
		}
		if err := paramProblem(r.URL.Query(), queryParams[pattern]); err != nil {
			s.fail(w, r, err)
			return
		}
		h(w, r.WithContext(withRoles(r.Context(), roles)))
	})
}

// Handle mounts another handler beside the API (the MCP endpoint, the
// console), so one listener serves them all. Patterns follow http.ServeMux.
// A pattern under /v1/ gets the API's bearer authentication before h runs
// (the API's own routes win where both match); anything else is h's own
// business.
func (s *Server) Handle(pattern string, h http.Handler) {
	s.mux.Handle(pattern, h)
	if strings.HasPrefix(patternPath(pattern), "/v1") {
		s.mounted.Handle(pattern, h)
	}
}

// Refuser is a handler mounted under /v1 with Handle that words the API's
// refusal of a request's token itself: the hook door, whose host must not
// read a refusal as leaving its call to its own permission rules.
type Refuser interface {
	Refuse(w http.ResponseWriter, r *http.Request, status int, err error)
}

// Admit returns the token r presents as "Authorization: Bearer ...",
// for handlers mounted outside /v1 (the MCP endpoint, the metrics) that
// take the same tokens; routes under /v1 are admitted already. A wrong
// token spends one from the budget of r's client address
// (Options.Guesses); once that is spent, the client's requests are
// refused without their token being looked at, right or wrong, and wait
// says how long until it may try again. Not ok, a door answers with
// AuthRefusal(w, wait): 401, or 429 while wait is above 0.
func (s *Server) Admit(r *http.Request) (tok Token, wait time.Duration, ok bool) {
	secret, given := bearer(r)
	if !given {
		return Token{}, 0, false // no token is no guess
	}
	ok, wait = s.guesses.Check(r, secret, func() (found bool) {
		tok, found = s.keys.Find(secret)
		return found
	})
	return tok, wait, ok
}

// Authenticate is Admit for a door that answers every refusal alike; a
// wrong token is counted all the same. Admit tells a client out of
// guesses (429) from a wrong token (401).
func (s *Server) Authenticate(r *http.Request) (Token, bool) {
	tok, _, ok := s.Admit(r)
	return tok, ok
}

// AuthRefusal sets the headers of Admit's refusal on w and returns its
// status and error, for a door to write in its own shape: with wait 0,
// 401 with WWW-Authenticate; above 0, 429 with Retry-After. Both errors
// carry core.CodeForbidden.
func AuthRefusal(w http.ResponseWriter, wait time.Duration) (status int, err error) {
	if wait > 0 {
		secs := guard.RetryAfter(wait)
		w.Header().Set("Retry-After", secs)
		return http.StatusTooManyRequests, core.Errorf(core.CodeForbidden, "auth",
			"too many wrong tokens from this address: try again in %s seconds", secs)
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="askbridge"`)
	return http.StatusUnauthorized, core.Errorf(core.CodeForbidden, "auth", "a valid bearer token is required")
}

// Keys is the token set the API authenticates with: Options.Tokens until
// the service's configuration carries tokens, then those (see
// Options.Tokens). The program shares it with the console.
func (s *Server) Keys() *Keys { return s.keys }

// Drain ends every parked wait (it answers 200 with the question as it
// stands, still open, and a client simply polls again, on another replica
// if need be) and every events stream, now and for requests still to
// come. Call it before http.Server.Shutdown, which would otherwise wait up
// to MaxWait for long polls to finish. It returns once the waits whose
// connections the API took over from net/http (see wait) have answered
// and closed them, since Shutdown does not see those connections.
func (s *Server) Drain() {
	s.drain()
	s.taken.Close()
}

// ServeHTTP authenticates /v1, routes, and logs one line per request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &recorder{ResponseWriter: w, status: http.StatusOK,
		line: accessLine{method: r.Method, path: r.URL.Path, start: time.Now()}}
	defer func() {
		if !rec.taken { // a taken-over wait logs when it answers
			s.logAccess(rec.line, rec.status)
		}
	}()
	// An agent's trace continues into what it asks (and an MCP call's,
	// over HTTP, unless its _meta names one): core.WithTraceParent.
	if tp := r.Header.Get("traceparent"); tp != "" {
		r = r.WithContext(core.WithTraceParent(r.Context(), tp, r.Header.Get("tracestate")))
	}

	if inAPI(r.URL) {
		tok, wait, ok := s.Admit(r)
		if !ok {
			status, err := AuthRefusal(rec, wait)
			if h, pattern := s.mux.Handler(r); strings.HasPrefix(patternPath(pattern), "/v1") {
				if rf, ok := h.(Refuser); ok {
					rf.Refuse(rec, r, status, err)
					return
				}
			}
			writeErrorStatus(rec, status, core.CodeForbidden, core.ErrorMessage(err))
			return
		}
		rec.line.token = tok.Name
		if unclean(r) { // never the mux's redirect (noroute.go)
			writeErrorStatus(rec, http.StatusNotFound, core.CodeNotFound, uncleanMessage)
			return
		}
		r = r.WithContext(withCaller(r.Context(), tok))
		if _, pattern := s.api.Handler(r); pattern != "" {
			s.api.ServeHTTP(rec, r)
			return
		}
		if _, pattern := s.mux.Handler(r); strings.HasPrefix(patternPath(pattern), "/v1") {
			s.mux.ServeHTTP(rec, r) // mounted under /v1 by Handle
			return
		}
		noRoute(rec, r, s.api, s.mounted)
		return
	}
	if _, pattern := s.mux.Handler(r); pattern == "" {
		// Outside /v1 too (the probes, the platforms' endpoints, a path
		// nothing serves), a caller reads the one documented error shape.
		noRoute(rec, r, s.mux)
		return
	}
	s.mux.ServeHTTP(rec, r)
}

// recorder remembers the status for the access log. It passes Flush and
// the rest of http.ResponseController's methods through to the writer it
// wraps.
type recorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	line        accessLine
	// taken: the connection was taken over (takeOver), and the access log
	// line is the taker's to write, with line, once it has answered.
	taken bool
}

// takeOver hijacks the connection for a handler that answers on it after
// it has returned.
func (r *recorder) takeOver() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(r.ResponseWriter).Hijack()
	r.taken = err == nil
	return conn, brw, err
}

// accessLine is what the access log says of a request, gathered while it
// is served.
type accessLine struct {
	method, path, token string
	start               time.Time
}

// maxLoggedPath and maxLoggedMethod bound the path and the method a log
// line quotes: a request needs no token to be logged, and either may be
// as long as the header limit allows (net/http takes any token as a
// method), each odd byte escaped to six in the log. The longest methods
// in use (WebDAV's) are some sixteen bytes.
const (
	maxLoggedPath   = 256
	maxLoggedMethod = 32
)

// logged is s as a log line quotes it: at most n bytes of it, marked as
// cut.
func logged(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// logAccess writes the access log line of a request answered with status.
func (s *Server) logAccess(l accessLine, status int) {
	ev := s.log.Info()
	if l.path == "/healthz" || l.path == "/readyz" {
		ev = s.log.Debug() // probes every few seconds would drown the rest
	}
	ev.Str("method", logged(l.method, maxLoggedMethod)).Str("path", logged(l.path, maxLoggedPath)).Int("status", status).
		Dur("duration", time.Since(l.start)).Str("token", l.token).Msg("http request")
}

func (r *recorder) WriteHeader(status int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = status, true
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wroteHeader = true
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Flush() {
	r.wroteHeader = true
	_ = http.NewResponseController(r.ResponseWriter).Flush()
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

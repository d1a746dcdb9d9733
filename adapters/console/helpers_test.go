package console_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/console"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/store/bolt"
)

// The test accounts: one per role.
var (
	opAlice  = testToken{"ops-alice", "secret-ops-alice-0123456789", console.RoleOperator}
	opBob    = testToken{"ops-bob", "secret-ops-bob-0123456789", console.RoleOperator}
	watcher  = testToken{"watcher", "secret-watcher-0123456789", console.RoleObserver}
	root     = testToken{"root", "secret-root-00123456789", console.RoleAdmin}
	agentTok = testToken{"agent-a", "secret-agent-a-0123456789", console.RoleAgent}
)

type testToken struct {
	name, secret string
	role         console.Role
}

// tokens is the program's side of console.Tokens for tests: a list that a
// test may change, as a new configuration would.
type tokens struct {
	mu   sync.Mutex
	list []testToken
}

func (t *tokens) BySecret(secret string) (console.Account, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tok := range t.list {
		if tok.secret == secret {
			return console.Account{Name: tok.name, Role: tok.role, Stamp: tok.secret[:12]}, true
		}
	}
	return console.Account{}, false
}

func (t *tokens) ByName(name string) (console.Account, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tok := range t.list {
		if tok.name == name {
			return console.Account{Name: tok.name, Role: tok.role, Stamp: tok.secret[:12]}, true
		}
	}
	return console.Account{}, false
}

func (t *tokens) set(list ...testToken) {
	t.mu.Lock()
	t.list = list
	t.mu.Unlock()
}

// spyValues is the real store, noting every expiring write, so a test can
// see sessions renewed without waiting for one to lapse.
type spyValues struct {
	*bolt.Store
	mu     sync.Mutex
	ttls   []time.Duration
	refuse string // SetValue of a key with this prefix fails, when set
}

func (s *spyValues) SetValue(ctx context.Context, key, val string) error {
	s.mu.Lock()
	refuse := s.refuse
	s.mu.Unlock()
	if refuse != "" && strings.HasPrefix(key, refuse) {
		return errors.New("spyValues: refused")
	}
	return s.Store.SetValue(ctx, key, val)
}

// refusing has SetValue fail for keys starting with prefix.
func (s *spyValues) refusing(prefix string) {
	s.mu.Lock()
	s.refuse = prefix
	s.mu.Unlock()
}

func (s *spyValues) SetValueFor(ctx context.Context, key, val string, ttl time.Duration) error {
	s.mu.Lock()
	s.ttls = append(s.ttls, ttl)
	s.mu.Unlock()
	return s.Store.SetValueFor(ctx, key, val, ttl)
}

func (s *spyValues) writes() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.ttls...)
}

type env struct {
	t      testing.TB
	dir    string
	store  *spyValues
	svc    *core.Service
	tokens *tokens
	srv    *httptest.Server
	clock  *core.SimClock
	opts   console.Options
	// simStore puts the store's clock, and so its expiries, on clock
	// too (newSimEnv).
	simStore bool
	// wrap, when set, is the store the service runs over, made from the
	// env's (newWrappedEnv).
	wrap func(*bolt.Store) core.Store
}

// routes used when a test gives none: anyone on the console may answer.
func openRoutes() map[string]core.Route {
	return map[string]core.Route{core.DefaultRoute: {Deciders: map[core.Surface][]string{
		core.SurfaceConsole: {"*"}, core.SurfaceAPI: {"*"},
	}}}
}

// pairRoutes are openRoutes and "pair", a sign-off that alice and bob
// must both give, as console deciders and as deciders on each of also.
func pairRoutes(also ...core.Surface) map[string]core.Route {
	pair := []string{opAlice.name, opBob.name}
	deciders := map[core.Surface][]string{core.SurfaceConsole: pair}
	for _, sf := range also {
		deciders[sf] = pair
	}
	routes := openRoutes()
	routes["pair"] = core.Route{Deciders: deciders, Quorum: 2}
	return routes
}

// newEnv runs the console over a bolt store in a temp dir, on a real HTTP
// server.
func newEnv(t testing.TB, routes map[string]core.Route, tune ...func(*console.Options)) *env {
	t.Helper()
	return newEnvOf(&env{t: t}, routes, tune...)
}

// newWrappedEnv is newEnv with the service over wrap of the store, so a
// test can step between the console and its store.
func newWrappedEnv(t testing.TB, routes map[string]core.Route, wrap func(*bolt.Store) core.Store) *env {
	t.Helper()
	return newEnvOf(&env{t: t, wrap: wrap}, routes)
}

// newSimEnv is newEnv with the store's expiries on the env's simulated
// clock as well, so a session left idle lapses when the clock says so.
func newSimEnv(t testing.TB, routes map[string]core.Route, tune ...func(*console.Options)) *env {
	t.Helper()
	return newEnvOf(&env{t: t, simStore: true}, routes, tune...)
}

// newEnvOf finishes e, which its caller made with t and its choices
// (simStore, wrap).
func newEnvOf(e *env, routes map[string]core.Route, tune ...func(*console.Options)) *env {
	t := e.t
	t.Helper()
	e.dir, e.tokens, e.clock = t.TempDir(), &tokens{}, core.NewSimClock(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	e.tokens.set(opAlice, opBob, watcher, root, agentTok)
	if routes == nil {
		routes = openRoutes()
	}
	e.open(routes)
	e.opts = console.Options{Tokens: e.tokens, Values: e.store, Log: zerolog.New(zerolog.NewTestWriter(t)), Now: e.clock.Now}
	for _, f := range tune {
		f(&e.opts)
	}
	e.srv = e.serve()
	return e
}

// budgets is a store for the sign-in budgets alone, on the env's
// simulated clock: on the wall clock a loaded machine's slow attempts
// would refill a budget mid-test.
func (e *env) budgets() core.Budget {
	st, err := bolt.Open(filepath.Join(e.t.TempDir(), "budgets.db"), bolt.Options{NoSync: true, Now: e.clock.Now})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { st.Close() })
	return st
}

func (e *env) open(routes map[string]core.Route) {
	opts := bolt.Options{}
	if e.simStore {
		opts = bolt.Options{NoSync: true, Now: e.clock.Now}
	}
	st, err := bolt.Open(filepath.Join(e.dir, "askbridge.db"), opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.store = &spyValues{Store: st}
	e.t.Cleanup(func() { st.Close() })
	var under core.Store = st
	if e.wrap != nil {
		under = e.wrap(st)
	}
	svc, err := core.New(under, core.Config{Routes: routes, ActorKey: []byte("test-actor-key")}, e.clock)
	if err != nil {
		e.t.Fatal(err)
	}
	e.svc = svc
}

// serve starts another console (a replica, or the same after a restart)
// over the env's current store.
func (e *env) serve() *httptest.Server {
	opts := e.opts
	opts.Values = e.store
	c, err := console.New(e.svc, opts)
	if err != nil {
		e.t.Fatal(err)
	}
	srv := httptest.NewServer(c)
	e.t.Cleanup(func() {
		c.Drain()
		srv.Close()
	})
	return srv
}

// restart closes the store and opens it again, with a new console.
func (e *env) restart() {
	e.srv.Close()
	e.store.Store.Close()
	e.open(e.svcRoutes())
	e.srv = e.serve()
}

func (e *env) svcRoutes() map[string]core.Route {
	out := map[string]core.Route{}
	for _, name := range []string{core.DefaultRoute, "infra", "ops"} {
		if r, ok := e.svc.Route(name); ok {
			out[name] = r
		}
	}
	return out
}

func (e *env) ask(in core.AskInput) *core.Question {
	e.t.Helper()
	if in.Agent == "" {
		in.Agent = "agent-a"
	}
	if in.RunID == "" {
		in.RunID = "run-1"
	}
	if in.Reversibility == "" {
		in.Reversibility = core.Reversible
	}
	if in.Kind == "" {
		in.Kind = core.KindClarification
	}
	q, err := e.svc.Ask(e.t.Context(), in)
	if err != nil {
		e.t.Fatal(err)
	}
	return q
}

func (e *env) get(id core.QuestionID) *core.Question {
	e.t.Helper()
	q, err := e.svc.Get(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return q
}

func (e *env) eventCount() int {
	evs, err := e.svc.Events(e.t.Context(), 0, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return len(evs)
}

// browser is one browser's cookies against a console server.
type browser struct {
	t    testing.TB
	base string
	c    *http.Client
	csrf string
}

func (e *env) browser(srv *httptest.Server) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: e.t, base: srv.URL, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// on points the browser's cookies at another server (a replica): the jar
// is keyed by host, and both listen on 127.0.0.1.
func (b *browser) on(srv *httptest.Server) *browser {
	c := *b
	c.base = srv.URL
	return &c
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

type response struct {
	status int
	body   string
	header http.Header
}

func (b *browser) do(req *http.Request) response {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if m := csrfField.FindStringSubmatch(string(body)); m != nil {
		b.csrf = m[1]
	}
	return response{resp.StatusCode, string(body), resp.Header}
}

func (b *browser) get(path string) response {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.base+path, nil)
	return b.do(req)
}

// post sends a form with the browser's CSRF token, unless the form sets
// its own csrf field.
func (b *browser) post(path string, form url.Values, header ...string) response {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", b.csrf)
	}
	req, _ := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return b.do(req)
}

// signIn signs the browser in with secret and returns the response.
func (b *browser) signIn(secret string) response {
	b.t.Helper()
	if r := b.get("/"); r.status != http.StatusOK {
		b.t.Fatalf("sign-in page: %d", r.status)
	}
	return b.post("/signin", url.Values{"token": {secret}})
}

func (e *env) signedIn(tok testToken) *browser {
	e.t.Helper()
	b := e.browser(e.srv)
	if r := b.signIn(tok.secret); r.status != http.StatusSeeOther {
		e.t.Fatalf("sign in as %s: %d\n%s", tok.name, r.status, r.body)
	}
	if r := b.get("/"); r.status != http.StatusOK || !strings.Contains(r.body, tok.name) {
		e.t.Fatalf("inbox after sign-in as %s: %d", tok.name, r.status)
	}
	return b
}

func sessionCookie(t *testing.T, r response) *http.Cookie {
	t.Helper()
	for _, raw := range r.header.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(raw)
		if err == nil && c.Name == "askbridge_session" && c.Value != "" {
			return c
		}
	}
	return nil
}

func mustURL(t *testing.T, raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

package console_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/console"
	"github.com/askbridge/askbridge/adapters/console/oidcfake"
	"github.com/askbridge/askbridge/core"
)

// claimPeople maps verified emails to people, as the program does from
// its configuration, which a test may change as a reload would.
type claimPeople struct {
	mu sync.Mutex
	m  map[string]string
}

func (c *claimPeople) ByClaim(v string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.m[v]
	return p, ok
}

func (c *claimPeople) Exists(p string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, q := range c.m {
		if q == p {
			return true
		}
	}
	return false
}

func (c *claimPeople) forget(email string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, email)
}

// oidcEnv is a console with OIDC sign-in against a local provider, its
// service knowing Alice (whose console id is oidc:alice) and a route
// that only she may decide.
type oidcEnv struct {
	*env
	idp    *oidcfake.Provider
	people *claimPeople
}

func newOIDCEnv(t *testing.T, tune ...func(*env, *console.Options)) *oidcEnv {
	t.Helper()
	e := newEnv(t, nil)
	idp, err := oidcfake.New("askbridge-console", "client-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(idp.Close)
	idp.Now = e.clock.Now
	routes := map[string]core.Route{
		core.DefaultRoute: {Deciders: map[core.Surface][]string{core.SurfaceConsole: {"*"}}},
		"alice-only":      {People: []string{"person:alice"}},
	}
	svc, err := core.New(e.store.Store, core.Config{Routes: routes, ActorKey: []byte("test-actor-key"), People: map[string]core.Person{
		"alice": {DisplayName: "Alice Example", IDs: map[core.Surface][]string{core.SurfaceConsole: {"oidc:alice"}}},
	}}, e.clock)
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	// The redirect URL names the listener, so it is taken before the
	// console is built.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	people := &claimPeople{m: map[string]string{"alice@example.com": "alice"}}
	opts := e.opts
	opts.Values = e.store
	opts.OIDC = &console.OIDC{Issuer: idp.URL, ClientID: idp.ClientID, ClientSecret: idp.ClientSecret,
		RedirectURL: "http://" + ln.Addr().String() + "/oidc/callback",
		People:      people,
		Roles:       map[string]console.Role{"askbridge-operators": console.RoleOperator, "staff": console.RoleObserver},
		Label:       "Sign in with Example SSO"}
	for _, f := range tune {
		f(e, &opts)
	}
	c, err := console.New(svc, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: c}}
	srv.Start()
	t.Cleanup(func() { c.Drain(); srv.Close() })
	e.srv = srv
	return &oidcEnv{env: e, idp: idp, people: people}
}

var alice = map[string]any{"email": "Alice@Example.com", "email_verified": true, "groups": []string{"staff", "askbridge-operators"}}

// visit GETs an absolute URL (the provider's, or a callback) in b.
func (b *browser) visit(u string) (response, string) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	r := b.do(req)
	return r, r.header.Get("Location")
}

// signInOIDC goes the whole way: the console's login, the provider's
// authorize, and back to the callback, whose response it returns with
// the callback URL (for a replay).
func (o *oidcEnv) signInOIDC(b *browser, next string) (response, string) {
	o.t.Helper()
	r := b.get("/oidc/login?next=" + url.QueryEscape(next))
	at := r.header.Get("Location")
	if r.status != http.StatusFound || !strings.HasPrefix(at, o.idp.URL+"/authorize?") {
		o.t.Fatalf("login: %d to %q", r.status, at)
	}
	u, _ := url.Parse(at)
	if q := u.Query(); q.Get("code_challenge_method") != "S256" || q.Get("nonce") == "" || q.Get("state") == "" {
		o.t.Fatalf("the authorization request lacks PKCE, nonce or state: %s", at)
	}
	r, back := b.visit(at)
	if r.status != http.StatusFound || !strings.HasPrefix(back, o.srv.URL+"/oidc/callback?") {
		o.t.Fatalf("authorize: %d to %q\n%s", r.status, back, r.body)
	}
	r, _ = b.visit(back)
	return r, back
}

// TestOIDCSignInDecidesAsThePerson: a good login makes a session for the
// person the verified email names, with the strongest role their groups
// map to; the console's answer is then that person's, as on chat, and a
// route that names only them lets them in.
func TestOIDCSignInDecidesAsThePerson(t *testing.T) {
	o := newOIDCEnv(t)
	o.idp.SignInAs(alice)
	b := o.browser(o.srv)
	if r := b.get("/"); !strings.Contains(r.body, `id="sso"`) || !strings.Contains(r.body, "Sign in with Example SSO") {
		t.Fatalf("the sign-in page offers no company sign-in:\n%s", r.body)
	}
	r, _ := o.signInOIDC(b, "/closed")
	if r.status != http.StatusOK || !strings.Contains(r.body, `url=/closed`) || sessionCookie(t, r) == nil {
		t.Fatalf("callback: %d\n%s", r.status, r.body)
	}
	c := sessionCookie(t, r)
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
		t.Fatalf("the session cookie is weaker than a token sign-in's: %+v", c)
	}
	home := b.body("/")
	if !strings.Contains(home, "oidc:alice") || !strings.Contains(home, "operator") {
		t.Fatalf("signed in as:\n%s", home)
	}
	q := o.ask(core.AskInput{Route: "alice-only", Text: "Which region?"})
	if r := b.post("/q/"+string(q.ID)+"/answer", url.Values{"text": {"eu-west"}}); r.status >= 400 {
		t.Fatalf("answer: %d\n%s", r.status, r.body)
	}
	got := o.get(q.ID)
	if d := got.Resolution.Decider; got.State != core.StateAnswered || d.Person != "alice" || d.ID != "oidc:alice" || d.Name != "Alice Example" {
		t.Fatalf("answered by %+v (%s)", got.Resolution.Decider, got.State)
	}
	// Signing out ends it, as a token's session.
	if r := b.post("/signout", nil); r.status != http.StatusSeeOther || strings.Contains(b.get("/").body, "oidc:alice") {
		t.Fatalf("sign out: %d", r.status)
	}
}

// body is a response's body, for a check in one line.
func (b *browser) body(path string) string { return b.get(path).body }

// TestOIDCRefusals: each way a sign-in can be wrong is refused, with the
// reason on the sign-in page and no session.
func TestOIDCRefusals(t *testing.T) {
	for _, c := range []struct {
		name  string
		user  map[string]any
		tweak func(map[string]any)
		why   string
	}{
		{"a wrong audience", alice, func(c map[string]any) { c["aud"] = "another-client" }, "did not check out"},
		{"an expired ID token", alice, func(c map[string]any) {
			c["exp"] = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC).Unix()
			c["iat"] = time.Date(2026, 11, 30, 7, 55, 0, 0, time.UTC).Unix()
		}, "did not check out"},
		{"another issuer", alice, func(c map[string]any) { c["iss"] = "https://evil.example" }, "did not check out"},
		{"a nonce of another sign-in", alice, func(c map[string]any) { c["nonce"] = "someone-elses" }, "nonce differs"},
		{"an unknown email", map[string]any{"email": "mallory@example.com", "email_verified": true, "groups": []string{"staff"}}, nil, "names no person"},
		{"an unverified email", map[string]any{"email": "alice@example.com", "email_verified": false, "groups": []string{"staff"}}, nil, "does not vouch"},
		{"no group that may use the console", map[string]any{"email": "alice@example.com", "email_verified": true, "groups": []string{"sales"}}, nil, "None of your groups"},
		{"the provider refused", nil, nil, "access_denied"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := newOIDCEnv(t)
			o.idp.SignInAs(c.user)
			o.idp.Tweak(c.tweak)
			b := o.browser(o.srv)
			r, _ := o.signInOIDC(b, "/")
			if r.status != http.StatusForbidden || !strings.Contains(r.body, c.why) || sessionCookie(t, r) != nil {
				t.Fatalf("%d, want 403 saying %q\n%s", r.status, c.why, r.body)
			}
			if strings.Contains(b.body("/"), "oidc:alice") {
				t.Fatal("signed in all the same")
			}
		})
	}
}

// TestOIDCStateIsSpentAndBoundToTheBrowser: a callback replayed after a
// good login is refused, and so is a callback in a browser that did not
// start the sign-in (a login forced on someone else's browser).
func TestOIDCStateIsSpentAndBoundToTheBrowser(t *testing.T) {
	o := newOIDCEnv(t)
	o.idp.SignInAs(alice)
	b := o.browser(o.srv)
	if r, _ := o.signInOIDC(b, "/"); r.status != http.StatusOK {
		t.Fatalf("first sign-in: %d", r.status)
	}
	// Replayed in the same browser, its state cookie put back.
	r := b.get("/oidc/login")
	at := r.header.Get("Location")
	r, back := b.visit(at)
	if r, _ := b.visit(back); r.status != http.StatusOK {
		t.Fatalf("second sign-in: %d", r.status)
	}
	issued := o.idp.Issued()
	state, _ := url.Parse(back)
	jarURL, _ := url.Parse(o.srv.URL + "/oidc/")
	b.c.Jar.SetCookies(jarURL, []*http.Cookie{{Name: "askbridge_oidc", Value: state.Query().Get("state"), Path: "/oidc/"}})
	if r, _ := b.visit(back); r.status != http.StatusForbidden || !strings.Contains(r.body, "used or has expired") || sessionCookie(t, r) != nil {
		t.Fatalf("a replayed callback: %d\n%s", r.status, r.body)
	}
	if o.idp.Issued() != issued {
		t.Fatal("a replayed state's code was exchanged again")
	}
	// A callback in another browser, which never started a sign-in.
	other := o.browser(o.srv)
	r = b.get("/oidc/login")
	_, back = b.visit(r.header.Get("Location"))
	if r, _ := other.visit(back); r.status != http.StatusForbidden || !strings.Contains(r.body, "not started in this browser") {
		t.Fatalf("a callback in another browser: %d\n%s", r.status, r.body)
	}
	if strings.Contains(other.body("/"), "oidc:alice") {
		t.Fatal("the other browser was signed in")
	}
}

// TestOIDCSessionEndsWithThePerson: a session the provider made ends
// when its person is no longer configured.
func TestOIDCSessionEndsWithThePerson(t *testing.T) {
	o := newOIDCEnv(t)
	o.idp.SignInAs(alice)
	b := o.browser(o.srv)
	if r, _ := o.signInOIDC(b, "/"); r.status != http.StatusOK {
		t.Fatalf("sign-in: %d", r.status)
	}
	if !strings.Contains(b.body("/"), "oidc:alice") {
		t.Fatal("not signed in")
	}
	o.people.forget("alice@example.com")
	if r := b.get("/closed"); r.status != http.StatusUnauthorized || strings.Contains(r.body, "oidc:alice") {
		t.Fatalf("after Alice left the configuration: %d", r.status)
	}
}

// TestOIDCStartsAreBounded: each start of a sign-in writes to the store,
// so starts spend the client's sign-in budget as token sign-ins do.
func TestOIDCStartsAreBounded(t *testing.T) {
	o := newOIDCEnv(t, func(e *env, opts *console.Options) { opts.SignIns = e.budgets() })
	b := o.browser(o.srv)
	for i := range console.SignInLimit.Burst {
		if r := b.get("/oidc/login"); r.status != http.StatusFound {
			t.Fatalf("start %d: %d", i+1, r.status)
		}
	}
	r := b.get("/oidc/login")
	if r.status != http.StatusTooManyRequests || r.header.Get("Location") != "" || r.header.Get("Retry-After") == "" {
		t.Fatalf("past the budget: %d, to %q", r.status, r.header.Get("Location"))
	}
}

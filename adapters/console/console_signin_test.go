package console_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/console"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/logbuf"
	"github.com/rs/zerolog"
)

func TestSignInExchangesATokenForASessionCookie(t *testing.T) {
	e := newEnv(t, nil)
	b := e.browser(e.srv)

	// An unknown token, and an agent's, get no session.
	if r := b.signIn("not-a-token-at-all-000"); r.status != http.StatusUnauthorized || sessionCookie(t, r) != nil ||
		!strings.Contains(r.body, "not one askbridge knows") {
		t.Fatalf("unknown token: %d %v", r.status, r.header)
	}
	if r := b.signIn(agentTok.secret); r.status != http.StatusForbidden || sessionCookie(t, r) != nil ||
		!strings.Contains(r.body, "agent&#39;s token") {
		t.Fatalf("agent token: %d\n%s", r.status, r.body)
	}

	r := b.signIn(opAlice.secret)
	c := sessionCookie(t, r)
	if r.status != http.StatusSeeOther || c == nil {
		t.Fatalf("sign in: %d, cookie %v", r.status, c)
	}
	// Lax, not Strict, so a link followed from chat or mail opens in the
	// session; safe because no GET changes anything and every POST needs
	// the session's CSRF token and passes the same-origin check.
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure || c.Path != "/" {
		t.Fatalf("cookie attributes: %+v", c)
	}
	// The cookie is not the token, and the store keeps only its digest.
	if strings.Contains(c.Value, opAlice.secret) {
		t.Fatal("the cookie carries the token")
	}
	sum := sha256.Sum256([]byte(c.Value))
	if v, _ := e.store.Value(t.Context(), "console:session:"+hex.EncodeToString(sum[:])); !strings.Contains(v, `"name":"ops-alice"`) {
		t.Fatalf("the session is not in the store under the cookie's digest: %q", v)
	}
	if v, _ := e.store.Value(t.Context(), "console:session:"+c.Value); v != "" {
		t.Fatal("the store holds the raw cookie as a key")
	}
	inbox := b.get("/")
	if inbox.status != http.StatusOK || !strings.Contains(inbox.body, "ops-alice") || strings.Contains(inbox.body, opAlice.secret) {
		t.Fatalf("inbox: %d", inbox.status)
	}

	// Through a TLS-terminating proxy the cookie is Secure.
	p := e.browser(e.srv)
	p.get("/")
	r = p.post("/signin", url.Values{"token": {opAlice.secret}}, "X-Forwarded-Proto", "https")
	if c := sessionCookie(t, r); c == nil || !c.Secure {
		t.Fatalf("behind https: %v", c)
	}

	// Sign out ends the session in the store: the old cookie is dead.
	old := b.c.Jar.Cookies(mustURL(t, e.srv.URL))
	if r := b.post("/signout", nil); r.status != http.StatusSeeOther {
		t.Fatalf("sign out: %d", r.status)
	}
	b.c.Jar.SetCookies(mustURL(t, e.srv.URL), old)
	if r := b.get("/q/" + string(e.ask(core.AskInput{Text: "x"}).ID)); r.status != http.StatusUnauthorized || !strings.Contains(r.body, `action="/signin"`) {
		t.Fatalf("a signed-out cookie still works: %d", r.status)
	}
}

// TestSignInAttemptsAreBounded: past SignInLimit's burst, an address's
// attempts are refused with 429 and Retry-After before any token is
// looked at, so even the right one gets no session.
func TestSignInAttemptsAreBounded(t *testing.T) {
	e := newEnv(t, nil)
	e.opts.SignIns = e.budgets()
	srv := e.serve()
	b := e.browser(srv)
	for i := range console.SignInLimit.Burst {
		if r := b.signIn("not-a-token-at-all-000"); r.status != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d, want 401", i+1, r.status)
		}
	}
	r := b.signIn(opAlice.secret)
	if r.status != http.StatusTooManyRequests || sessionCookie(t, r) != nil || !strings.Contains(r.body, "Too many sign-in attempts") {
		t.Fatalf("past the limit, the right token: %d, cookie %v\n%s", r.status, sessionCookie(t, r), r.body)
	}
	if secs, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || secs < 1 {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	// Without a budget (the default) nothing is bounded.
	plain := e.browser(e.srv)
	for range console.SignInLimit.Burst + 1 {
		plain.signIn("not-a-token-at-all-000")
	}
	if r := plain.signIn(opAlice.secret); r.status != http.StatusSeeOther {
		t.Fatalf("without a budget: %d", r.status)
	}
}

// TestSignInBudgetBehindATrustedProxy: behind a proxy the console
// trusts, each client the proxy names has a budget of its own, so one
// client's failed attempts do not lock out another's; from a peer it does
// not trust, a forwarded-for header is ignored and cannot buy a fresh
// budget.
func TestSignInBudgetBehindATrustedProxy(t *testing.T) {
	e := newEnv(t, nil)
	e.opts.SignIns = e.budgets()
	proxies, err := console.ParseProxies("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	e.opts.TrustedProxies = proxies
	behind := e.serve()
	signInAs := func(b *browser, client, secret string) response {
		b.t.Helper()
		if r := b.get("/"); r.status != http.StatusOK {
			b.t.Fatalf("sign-in page: %d", r.status)
		}
		return b.post("/signin", url.Values{"token": {secret}}, "X-Forwarded-For", "198.51.100.1, "+client)
	}
	guesser := e.browser(behind)
	for range console.SignInLimit.Burst {
		signInAs(guesser, "203.0.113.66", "not-a-token-at-all-000")
	}
	if r := signInAs(guesser, "203.0.113.66", opAlice.secret); r.status != http.StatusTooManyRequests {
		t.Fatalf("the guessing client past its burst: %d, want 429", r.status)
	}
	// The left-most entry is the client's to write: it buys nothing.
	if r := signInAs(e.browser(behind), "203.0.113.66", opAlice.secret); r.status != http.StatusTooManyRequests {
		t.Fatalf("the same client, another browser: %d, want 429", r.status)
	}
	if r := signInAs(e.browser(behind), "203.0.113.77", opAlice.secret); r.status != http.StatusSeeOther {
		t.Fatalf("another client behind the same proxy: %d, want signed in\n%s", r.status, r.body)
	}

	// A console that trusts no proxy counts the peer, whatever the header.
	e.opts.TrustedProxies = nil
	direct := e.serve()
	b := e.browser(direct)
	for i := range console.SignInLimit.Burst {
		signInAs(b, "203.0.113."+strconv.Itoa(i), "not-a-token-at-all-000")
	}
	if r := signInAs(b, "203.0.113.99", opAlice.secret); r.status != http.StatusTooManyRequests {
		t.Fatalf("a new forwarded-for from an untrusted peer bought a fresh budget: %d", r.status)
	}
}

func TestSessionsLiveInTheStore(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	q := e.ask(core.AskInput{Text: "Which region?"})

	// Another replica over the same store knows the session.
	replica := e.serve()
	if r := b.on(replica).get("/q/" + string(q.ID)); r.status != http.StatusOK || !strings.Contains(r.body, "Which region?") {
		t.Fatalf("on a replica: %d", r.status)
	}
	// A restart keeps it.
	e.restart()
	b = b.on(e.srv)
	if r := b.get("/"); r.status != http.StatusOK || !strings.Contains(r.body, "Which region?") {
		t.Fatalf("after a restart: %d", r.status)
	}
	// A token removed from the configuration, or given a new secret,
	// ends its sessions.
	e.tokens.set(opBob, root)
	if r := b.get("/"); strings.Contains(r.body, "Which region?") {
		t.Fatal("a removed token's session still works")
	}
	e.tokens.set(opAlice, opBob, root)
	e.tokens.set(testToken{opAlice.name, "a-new-secret-for-alice-000", console.RoleOperator})
	if r := b.get("/"); strings.Contains(r.body, "Which region?") {
		t.Fatal("a session outlived its token's old secret")
	}
}

func TestSessionsRenewWhileUsedAndLapseWhenIdle(t *testing.T) {
	const idle = 300 * time.Millisecond
	e := newEnv(t, nil, func(o *console.Options) { o.Idle = idle })
	b := e.signedIn(opAlice)
	// Every session write lasts the idle time; use renews it.
	before := len(e.store.writes())
	e.clock.Advance(time.Second) // past the renewal interval, on the console's clock
	b.get("/")
	w := e.store.writes()
	if len(w) <= before {
		t.Fatal("use did not renew the session")
	}
	for _, ttl := range w {
		if ttl != idle {
			t.Fatalf("a session was stored for %s, want the idle time %s", ttl, idle)
		}
	}
	// Left alone, it lapses on the store's clock. Wait for it, bounded.
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/", nil)
		for _, c := range b.c.Jar.Cookies(mustURL(t, e.srv.URL)) {
			req.AddCookie(c)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("Set-Cookie") != "" && !strings.Contains(resp.Header.Get("Set-Cookie"), "askbridge_session") {
			break // the sign-in form again: a fresh sign-in cookie, no session
		}
		if time.Now().After(deadline) {
			t.Fatal("an idle session never lapsed")
		}
	}
}

func TestSignInReturnsToThePageThatAskedForIt(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(core.AskInput{Text: "Linked from chat"})
	b := e.browser(e.srv)
	if r := b.get("/q/" + string(q.ID)); r.status != http.StatusUnauthorized || !strings.Contains(r.body, `name="next" value="/q/`+string(q.ID)+`"`) {
		t.Fatalf("signed out: %d", r.status)
	}
	r := b.post("/signin", url.Values{"token": {opAlice.secret}, "next": {"/q/" + string(q.ID)}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/q/"+string(q.ID) {
		t.Fatalf("sign in: %d to %q", r.status, r.header.Get("Location"))
	}
	// Only paths of this site: anything else goes to the inbox.
	for _, next := range []string{"//evil.example/x", "https://evil.example/", "/\\evil.example", "q/x", ""} {
		c := e.browser(e.srv)
		c.get("/")
		if r := c.post("/signin", url.Values{"token": {opAlice.secret}, "next": {next}}); r.header.Get("Location") != "/" {
			t.Errorf("next %q led to %q", next, r.header.Get("Location"))
		}
	}
}

// TestLastVisitNotRecordedIsLogged: a session renewed while the store
// refuses the last visit's write still serves, and the failure is logged
// (the "since you were away" marker is what it costs); before, it was
// dropped unheard.
func TestLastVisitNotRecordedIsLogged(t *testing.T) {
	logs := &logbuf.Buffer{}
	e := newEnv(t, nil, func(o *console.Options) { o.Log = zerolog.New(logs) })
	b := e.signedIn(opAlice)
	e.store.refusing("console:visit:")
	e.clock.Advance(time.Minute) // past the renewal interval
	if r := b.get("/"); r.status != http.StatusOK {
		t.Fatalf("a renewal whose visit was not recorded: %d", r.status)
	}
	if !strings.Contains(logs.String(), "last visit was not recorded") {
		t.Fatalf("the refused write went unlogged:\n%s", logs.String())
	}
}

// TestSessionsEndAtTheirMaxAge: a session used all along still ends at
// its maximum age from the sign-in (what an identity provider granted is
// then read afresh); before, use renewed it for ever.
func TestSessionsEndAtTheirMaxAge(t *testing.T) {
	e := newEnv(t, nil, func(o *console.Options) { o.MaxAge = 24 * time.Hour })
	e.ask(core.AskInput{Text: "Which region?"})
	b := e.signedIn(opAlice)
	for range 2 {
		e.clock.Advance(11 * time.Hour) // used within the idle time
		if r := b.get("/"); !strings.Contains(r.body, "Which region?") {
			t.Fatal("a session in use ended before its maximum age")
		}
	}
	e.clock.Advance(3 * time.Hour) // 25 hours after the sign-in
	if r := b.get("/"); strings.Contains(r.body, "Which region?") {
		t.Fatal("a session in use outlived its maximum age")
	}
}

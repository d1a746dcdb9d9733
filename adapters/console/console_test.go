package console_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/console"
	"github.com/askbridge/askbridge/core"
)

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
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure || c.Path != "/" {
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
	if r := b.get("/q/" + e.ask(core.AskInput{Text: "x"}).ID); r.status != http.StatusUnauthorized || !strings.Contains(r.body, `action="/signin"`) {
		t.Fatalf("a signed-out cookie still works: %d", r.status)
	}
}

// TestSignInAttemptsAreBounded: past SignInLimit's burst, an address's
// attempts are refused with 429 and Retry-After before any token is
// looked at, so even the right one gets no session.
func TestSignInAttemptsAreBounded(t *testing.T) {
	e := newEnv(t, nil)
	e.opts.SignIns = e.store
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
	e.opts.SignIns = e.store
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

func mustURL(t *testing.T, raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestSessionsLiveInTheStore(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	q := e.ask(core.AskInput{Text: "Which region?"})

	// Another replica over the same store knows the session.
	replica := e.serve()
	if r := b.on(replica).get("/q/" + q.ID); r.status != http.StatusOK || !strings.Contains(r.body, "Which region?") {
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

func TestEveryStateChangeNeedsCSRFAndTheSameOrigin(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	q := e.ask(core.AskInput{Text: "Which region?"})
	events := e.eventCount()
	refused := func(name string, r response) {
		t.Helper()
		if r.status != http.StatusForbidden {
			t.Fatalf("%s: %d, want 403", name, r.status)
		}
		if got := e.get(q.ID); !got.Open() {
			t.Fatalf("%s changed the question: %s", name, got.State)
		}
		if n := e.eventCount(); n != events {
			t.Fatalf("%s appended %d events", name, n-events)
		}
	}
	path := "/q/" + q.ID + "/answer"
	refused("no token", b.post(path, url.Values{"text": {"eu"}, "csrf": {""}}))
	refused("a wrong token", b.post(path, url.Values{"text": {"eu"}, "csrf": {"forged"}}))
	refused("another site", b.post(path, url.Values{"text": {"eu"}}, "Sec-Fetch-Site", "cross-site"))
	refused("another origin", b.post(path, url.Values{"text": {"eu"}}, "Origin", "https://evil.example"))
	refused("decline, no token", b.post("/q/"+q.ID+"/decline", url.Values{"csrf": {""}}))
	// Sign-out and sign-in are state changes too.
	if r := b.post("/signout", url.Values{"csrf": {""}}); r.status != http.StatusForbidden {
		t.Fatalf("sign out without a token: %d", r.status)
	}
	if r := b.get("/"); !strings.Contains(r.body, "ops-alice") {
		t.Fatal("a forged sign-out signed the browser out")
	}
	fresh := e.browser(e.srv)
	if r := fresh.post("/signin", url.Values{"token": {opAlice.secret}, "csrf": {"guess"}}); r.status != http.StatusForbidden || sessionCookie(t, r) != nil {
		t.Fatalf("a sign-in without the form's token: %d", r.status)
	}
	// With the token, from this origin, it counts.
	if r := b.post(path, url.Values{"text": {"eu-west-1"}}); r.status != http.StatusOK {
		t.Fatalf("a proper post: %d\n%s", r.status, r.body)
	}
}

func TestSecurityHeaders(t *testing.T) {
	e := newEnv(t, nil)
	b := e.browser(e.srv)
	for _, path := range []string{"/", "/assets/console.js", "/nope"} {
		r := b.get(path)
		csp := r.header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "http") {
			t.Errorf("%s: CSP allows inline code or another origin: %q", path, csp)
		}
	}
	// No inline script or style, and nothing from another origin, in any page.
	page := b.get("/").body
	for _, bad := range []string{"<script>", "style=", "onclick", "http://", "https://"} {
		if strings.Contains(page, bad) {
			t.Errorf("the sign-in page holds %q", bad)
		}
	}
}

func TestObserverSeesEverythingAndAnswersNothing(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Deploy?", Tool: "deploy", Arguments: []byte(`{"env":"prod"}`)})
	w := e.signedIn(watcher)
	r := w.get("/")
	if !strings.Contains(r.body, "Deploy?") || !strings.Contains(r.body, q.Call.ArgumentsSHA256) {
		t.Fatal("the observer does not see the question")
	}
	for _, control := range []string{"/answer", "/decline", "/cancel", `name="option"`} {
		if strings.Contains(r.body, control) {
			t.Fatalf("the observer's inbox has %s", control)
		}
	}
	for _, path := range []string{"/answer", "/decline", "/cancel"} {
		if r := w.post("/q/"+q.ID+path, url.Values{"option": {"approve"}}); r.status != http.StatusForbidden {
			t.Fatalf("observer %s: %d", path, r.status)
		}
	}
	if !e.get(q.ID).Open() {
		t.Fatal("an observer changed the question")
	}
	// An operator may decline but not cancel; an admin may cancel.
	op := e.signedIn(opAlice)
	if strings.Contains(op.get("/").body, "/cancel") {
		t.Fatal("an operator is offered cancel")
	}
	if r := op.post("/q/"+q.ID+"/cancel", nil); r.status != http.StatusForbidden || !e.get(q.ID).Open() {
		t.Fatalf("operator cancel: %d", r.status)
	}
	admin := e.signedIn(root)
	if !strings.Contains(admin.get("/").body, "/cancel") {
		t.Fatal("an admin is not offered cancel")
	}
	r = admin.post("/q/"+q.ID+"/cancel", url.Values{"reason": {"superseded"}})
	if got := e.get(q.ID); r.status != http.StatusOK || got.State != core.StateCancelled || got.Resolution.Reason != "superseded" ||
		got.Resolution.Decider.Surface != core.SurfaceConsole || got.Resolution.Decider.ID != "root" || got.Resolution.Decider.Name != "root" {
		t.Fatalf("admin cancel: %d, %+v", r.status, got.Resolution)
	}
}

func TestTheRoutesConsoleDecidersApply(t *testing.T) {
	routes := openRoutes()
	routes["infra"] = core.Route{Deciders: map[core.Surface][]string{
		core.SurfaceConsole: {"ops-alice", "role:admin"},
		core.SurfaceAPI:     {"ops-bob"}, // the API's list does not reach the console
	}}
	e := newEnv(t, routes)
	q := e.ask(core.AskInput{Text: "Resize the cluster?", Route: "infra"})
	bob := e.signedIn(opBob)
	r := bob.get("/")
	if strings.Contains(r.body, "/q/"+q.ID+"/answer") || !strings.Contains(r.body, "does not list ops-bob") {
		t.Fatal("bob is offered controls on a route that does not list him")
	}
	events := e.eventCount()
	if r := bob.post("/q/"+q.ID+"/answer", url.Values{"text": {"yes"}}); r.status != http.StatusForbidden ||
		!strings.Contains(r.body, "not one of the people who may answer") {
		t.Fatalf("bob answers: %d", r.status)
	}
	evs, _ := e.svc.Events(t.Context(), int64(events), 0)
	if len(evs) != 1 || evs[0].Kind != core.EventRefused || evs[0].Surface != core.SurfaceConsole ||
		evs[0].Actor != core.Pseudonym([]byte("test-actor-key"), core.Decider{Surface: core.SurfaceConsole, ID: "ops-bob"}) {
		t.Fatalf("the refusal is not recorded as core records refusals: %+v", evs)
	}
	if !e.get(q.ID).Open() {
		t.Fatal("bob's answer counted")
	}
	// A role entry lets the admin in; a name lets alice in.
	if !strings.Contains(e.signedIn(root).get("/").body, "/q/"+q.ID+"/answer") {
		t.Fatal("role:admin did not let the admin answer")
	}
	alice := e.signedIn(opAlice)
	if r := alice.post("/q/"+q.ID+"/answer", url.Values{"text": {"yes, to 5 nodes"}}); r.status != http.StatusOK {
		t.Fatalf("alice: %d", r.status)
	}
	if got := e.get(q.ID); got.Resolution.Answer != "yes, to 5 nodes" || got.Resolution.Decider.Surface != core.SurfaceConsole || got.Resolution.Decider.ID != "ops-alice" {
		t.Fatalf("recorded: %+v", got.Resolution)
	}
}

func TestNotFoundLooksTheSameForEveryCase(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	valid := e.ask(core.AskInput{Text: "x"}).ID
	unknown := valid[:1] + strings.Repeat("a", len(valid)-1)
	var first response
	for i, path := range []string{"/q/" + unknown, "/q/not!an!id", "/q/" + strings.Repeat("z", 300), "/rows/" + unknown, "/nothing-here", "/q/" + unknown + "/part"} {
		r := b.get(path)
		if r.status != http.StatusNotFound {
			t.Fatalf("%s: %d", path, r.status)
		}
		if i == 0 {
			first = r
		} else if r.body != first.body {
			t.Fatalf("%s reads differently from an unknown id:\n%s\n---\n%s", path, r.body, first.body)
		}
	}
	for _, path := range []string{"/q/" + unknown + "/answer", "/q/not!an!id/decline"} {
		if r := b.post(path, url.Values{"text": {"x"}}); r.status != http.StatusNotFound || r.body != first.body {
			t.Fatalf("POST %s: %d", path, r.status)
		}
	}
}

func TestARaceHasOneWinnerAndTheLosersHearWho(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(core.AskInput{Kind: core.KindDecision, Text: "Queue?", Options: []core.Option{
		{ID: "kafka", Title: "Kafka", Writeup: "durable, heavy", Recommended: true},
		{ID: "sqs", Title: "SQS", Writeup: "managed, lighter"},
	}})
	browsers := []*browser{e.signedIn(opAlice), e.signedIn(opBob), e.signedIn(root)}
	var wg sync.WaitGroup
	results := make([]response, 9)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := *browsers[i%3] // its own copy: post notes the page's CSRF token
			results[i] = b.post("/q/"+q.ID+"/answer", url.Values{"option": {[]string{"kafka", "sqs"}[i%2]}})
		}()
	}
	wg.Wait()
	got := e.get(q.ID)
	wins := 0
	for _, r := range results {
		switch r.status {
		case http.StatusOK:
			wins++
			if !strings.Contains(r.body, got.Resolution.Answer) {
				t.Fatalf("the winner's page does not show what was recorded")
			}
		case http.StatusConflict:
			want := "Already closed. Answered by " + core.DeciderLabel(got.Resolution.Decider) + " on " + got.Resolution.At.Format("2006-01-02 15:04 UTC") + " via console. Your answer was not recorded."
			if !strings.Contains(r.body, want) || !strings.Contains(r.body, core.ChoiceLabel(got)) {
				t.Fatalf("a loser's page lacks %q:\n%s", want, r.body)
			}
		default:
			t.Fatalf("status %d", r.status)
		}
	}
	if wins != 1 {
		t.Fatalf("%d winners", wins)
	}
	// An answer from the API first: the console's loser is told so.
	q2 := e.ask(core.AskInput{Text: "Name?"})
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q2.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops-bot", Name: "ops-bot"}, Text: "atlas"}); err != nil {
		t.Fatal(err)
	}
	r := browsers[0].post("/q/"+q2.ID+"/answer", url.Values{"text": {"zeus"}})
	if r.status != http.StatusConflict || !strings.Contains(r.body, "Already closed. Answered by ops-bot on ") || !strings.Contains(r.body, " via api. Your answer was not recorded.") ||
		!strings.Contains(r.body, "atlas") {
		t.Fatalf("loser after the API: %d\n%s", r.status, r.body)
	}
}

func TestEachKindRecordsExactlyWhatWasGiven(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)

	clar := e.ask(core.AskInput{Text: "Which database?"})
	if r := b.post("/q/"+clar.ID+"/answer", url.Values{"text": {"   "}}); r.status != http.StatusBadRequest || !e.get(clar.ID).Open() ||
		!strings.Contains(r.body, "must not be blank") {
		t.Fatalf("a blank answer: %d", r.status)
	}
	r := b.post("/q/"+clar.ID+"/answer", url.Values{"text": {"Postgres <16>"}})
	if r.status != http.StatusOK || !strings.Contains(r.body, "Postgres &lt;16&gt;") || e.get(clar.ID).Resolution.Answer != "Postgres <16>" {
		t.Fatalf("clarification: %d", r.status)
	}

	dec := e.ask(core.AskInput{Kind: core.KindDecision, Text: "Queue?", Options: []core.Option{
		{ID: "kafka", Title: "Kafka", Writeup: "durable, heavy", Recommended: true},
		{ID: "sqs", Title: "SQS", Writeup: "managed, lighter"},
	}})
	page := b.get("/").body
	if !strings.Contains(page, `value="kafka" class="option primary"`) || !strings.Contains(page, "durable, heavy") {
		t.Fatal("the decision's buttons lack the write-up or the recommended marker")
	}
	r = b.post("/q/"+dec.ID+"/answer", url.Values{"option": {"sqs"}, "text": {"cheaper for now"}})
	if res := e.get(dec.ID).Resolution; r.status != http.StatusOK || res.OptionID != "sqs" || res.Reason != "cheaper for now" ||
		!strings.Contains(r.body, "managed, lighter") || !strings.Contains(r.body, "cheaper for now") {
		t.Fatalf("decision: %d %+v", r.status, res)
	}

	appr := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Drop the table?", Tool: "sql", Arguments: []byte(`{"b":1,"a":"x"}`)})
	if page := b.get("/q/" + appr.ID).body; !strings.Contains(page, "{\n  &#34;a&#34;: &#34;x&#34;,\n  &#34;b&#34;: 1\n}") {
		t.Fatalf("the arguments are not pretty-printed:\n%s", page)
	}
	r = b.post("/q/"+appr.ID+"/answer", url.Values{"option": {"deny"}, "text": {"not on a Friday"}})
	if res := e.get(appr.ID).Resolution; r.status != http.StatusOK || *res.Approved || res.Reason != "not on a Friday" ||
		!strings.Contains(r.body, appr.Call.ArgumentsSHA256) || !strings.Contains(r.body, "denied") {
		t.Fatalf("approval: %d %+v", r.status, res)
	}

	form := e.ask(core.AskInput{Kind: core.KindForm, Text: "Set-up", Items: []core.FormItem{
		{ID: "region", Question: "Region?", Options: []core.FormOption{{ID: "eu", Label: "EU", Recommended: true}, {ID: "us", Label: "US"}}},
		{ID: "size", Question: "Size?", Options: []core.FormOption{{ID: "s", Label: "Small"}, {ID: "l", Label: "Large"}}},
	}})
	r = b.post("/q/"+form.ID+"/answer", url.Values{"item": {"region"}, "item_option": {"eu"}})
	if r.status != http.StatusOK || !e.get(form.ID).Open() {
		t.Fatalf("first item: %d", r.status)
	}
	// Bob sees alice's item answered, and only the other item to answer.
	bob := e.signedIn(opBob)
	page = bob.get("/").body
	if !strings.Contains(page, "answered by ops-alice") || strings.Contains(page, `name="item" value="region"`) || !strings.Contains(page, `name="item" value="size"`) {
		t.Fatal("the form does not show who answered the first item")
	}
	r = bob.post("/q/"+form.ID+"/answer", url.Values{"item": {"size"}, "item_text": {"medium, please"}})
	got := e.get(form.ID)
	if r.status != http.StatusOK || got.State != core.StateAnswered || got.Answers[1].Text != "medium, please" || got.Answers[0].Decider.ID != "ops-alice" {
		t.Fatalf("form: %d %+v", r.status, got.Answers)
	}
	if !strings.Contains(r.body, "Region?") || !strings.Contains(r.body, "medium, please") {
		t.Fatal("the form's result does not show both items")
	}
	// Two people answered it: the result and a late answer both name
	// each of them, in core's one outcome line, not Bob alone.
	line := "Answered item by item on " + got.Resolution.At.UTC().Format("2006-01-02 15:04 UTC") + ": 1 by ops-alice, 1 by ops-bob"
	if !strings.Contains(r.body, line) || strings.Contains(r.body, "ops-bob via console") {
		t.Fatalf("the form's result does not say who answered it (%q):\n%s", line, r.body)
	}
	if r = b.post("/q/"+form.ID+"/answer", url.Values{"item": {"size"}, "item_option": {"s"}}); r.status != http.StatusConflict ||
		!strings.Contains(r.body, "Already closed. "+line+". Your answer was not recorded.") {
		t.Fatalf("a late answer to the form: %d\n%s", r.status, r.body)
	}

	decl := e.ask(core.AskInput{Text: "Anything?"})
	r = b.post("/q/"+decl.ID+"/decline", nil)
	if got := e.get(decl.ID); r.status != http.StatusOK || got.State != core.StateDeclined {
		t.Fatalf("decline: %d %s", r.status, got.State)
	}
}

func TestHistoryShowsEveryEventAndTheResume(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	q := e.ask(core.AskInput{Text: "Which region?"})
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops-bot"}, Text: "eu"}); err != nil {
		t.Fatal(err)
	}
	b.post("/q/"+q.ID+"/answer", url.Values{"text": {"late"}}) // a refused attempt
	page := b.get("/q/" + q.ID).body
	digest := core.Pseudonym([]byte("test-actor-key"), core.Decider{Surface: core.SurfaceConsole, ID: "ops-alice"})
	for _, want := range []string{"asked", "answered", "refused", digest, "question already answered", "askbridge-resume", "ANSWERED"} {
		if !strings.Contains(page, want) {
			t.Errorf("the history lacks %q", want)
		}
	}
	if strings.Contains(page, ">ops-alice</td>") {
		t.Error("the history names a person instead of their digest")
	}
}

func TestWhileYouWereAway(t *testing.T) {
	e := newEnv(t, nil)
	first := e.signedIn(opAlice)
	if strings.Contains(first.get("/").body, "While you were away") {
		t.Fatal("a first visit has a banner")
	}
	e.clock.Advance(time.Hour)
	a := e.ask(core.AskInput{Text: "Asked while away"})
	e.ask(core.AskInput{Text: "Also asked"})
	if _, err := e.svc.Decline(t.Context(), a.ID, core.Decider{Surface: core.SurfaceAPI, ID: "ops-bot"}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	b := e.browser(e.srv)
	b.signIn(opAlice.secret)
	page := b.get("/").body
	if !strings.Contains(page, "While you were away") || !strings.Contains(page, "2 asked, 1 closed, 1 still open") {
		t.Fatalf("banner:\n%s", page)
	}
	if strings.Contains(b.get("/").body, "While you were away") {
		t.Fatal("the banner shows twice")
	}
}

func TestTheStreamCatchesUpFromTheLastEvent(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	q1 := e.ask(core.AskInput{Text: "one"})
	q2 := e.ask(core.AskInput{Text: "two"})

	read := func(header string, want int) []string {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.srv.URL+"/stream?since=0", nil)
		if header != "" {
			req.Header.Set("Last-Event-ID", header)
		}
		resp, err := b.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("stream: %d", resp.StatusCode)
		}
		var got []string
		sc := bufio.NewScanner(resp.Body)
		var id string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: ") && id != "":
				var c struct{ QuestionID, Kind string }
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &c); err != nil {
					t.Fatal(err)
				}
				got = append(got, id+" "+c.Kind)
			case line == "event: ready":
				if len(got) != want {
					t.Fatalf("ready after %v, want %d changes first", got, want)
				}
				return got
			}
		}
		t.Fatal("the stream ended before ready")
		return nil
	}
	all := read("", 2)
	if all[0] != "1 asked" || all[1] != "2 asked" {
		t.Fatalf("from the start: %v", all)
	}
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q1.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "x"}, Text: "a"}); err != nil {
		t.Fatal(err)
	}
	_ = q2
	// A reconnect sends its Last-Event-ID, which wins over ?since.
	if got := read("2", 1); got[0] != "3 answered" {
		t.Fatalf("after reconnect: %v", got)
	}
	// Signed out, there is no stream.
	anon := e.browser(e.srv)
	if r := anon.get("/stream"); r.status != http.StatusUnauthorized {
		t.Fatalf("anonymous stream: %d", r.status)
	}
}

func TestFiltersLiveInTheURL(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	e.ask(core.AskInput{Text: "search one", Labels: core.Labels{Project: "search"}, Agent: "agent-b"})
	e.clock.Advance(time.Second)
	e.ask(core.AskInput{Text: "billing one", Labels: core.Labels{Project: "billing"}, Reversibility: core.HardToReverse})
	e.clock.Advance(time.Second)
	e.ask(core.AskInput{Kind: core.KindApproval, Text: "billing approval", Labels: core.Labels{Project: "billing"}, Tool: "t", Arguments: []byte(`{}`)})
	cases := map[string][]string{
		"":                               {"billing one", "search one", "billing approval"},
		"?project=billing":               {"billing one", "billing approval"},
		"?kind=approval":                 {"billing approval"},
		"?agent=agent-b":                 {"search one"},
		"?reversibility=hard_to_reverse": {"billing one"},
		"?route=other":                   {},
	}
	for query, want := range cases {
		page := b.get("/" + query).body
		n := strings.Count(page, `<details class="qrow card`)
		if n != len(want) {
			t.Errorf("%q: %d cards, want %d", query, n, len(want))
		}
		for _, w := range want {
			if !strings.Contains(page, w) {
				t.Errorf("%q lacks %q", query, w)
			}
		}
	}
	// The API's order: hard to reverse first, then oldest, as the API
	// lists them.
	qs, _, _ := e.svc.ListOpen(t.Context(), "", 0)
	if qs[0].Text != "billing one" || qs[1].Text != "search one" {
		t.Fatalf("the API's own order: %s, %s", qs[0].Text, qs[1].Text)
	}
	page := b.get("/").body
	if i, j, k := strings.Index(page, "billing one"), strings.Index(page, "search one"), strings.Index(page, "billing approval"); !(i < j && j < k) {
		t.Fatalf("order: %d %d %d", i, j, k)
	}
	if r := b.get("/?kind=poem"); r.status != http.StatusBadRequest || !strings.Contains(r.body, "kind &#34;poem&#34; is not one of") {
		t.Fatalf("a bad filter: %d", r.status)
	}
}

func TestSignInReturnsToThePageThatAskedForIt(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(core.AskInput{Text: "Linked from chat"})
	b := e.browser(e.srv)
	if r := b.get("/q/" + q.ID); r.status != http.StatusUnauthorized || !strings.Contains(r.body, `name="next" value="/q/`+q.ID+`"`) {
		t.Fatalf("signed out: %d", r.status)
	}
	r := b.post("/signin", url.Values{"token": {opAlice.secret}, "next": {"/q/" + q.ID}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/q/"+q.ID {
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

package console_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

func signinCookieOf(r response) *http.Cookie {
	for _, raw := range r.header.Values("Set-Cookie") {
		if c, err := http.ParseSetCookie(raw); err == nil && c.Name == "askbridge_signin" {
			return c
		}
	}
	return nil
}

// TestTwoSignedOutTabsBothSignIn: a second signed-out tab (the inbox,
// then a link from chat) leaves the first tab's form working; before,
// every sign-in page set a fresh cookie and only the last form loaded
// could sign in ("The sign-in form had expired"). The cookie is still
// Strict and the form's token is still exactly the cookie's, and a cookie
// the console did not mint is replaced, not adopted.
func TestTwoSignedOutTabsBothSignIn(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(core.AskInput{Text: "Which region?"})
	b := e.browser(e.srv)
	first := b.get("/q/" + string(q.ID)) // tab 1: a link from chat
	csrf1 := b.csrf
	c := signinCookieOf(first)
	if c == nil || c.Value != csrf1 || c.SameSite != http.SameSiteStrictMode || !c.HttpOnly || c.MaxAge <= 0 {
		t.Fatalf("the sign-in cookie is not Strict and HttpOnly, or not the form's token: %+v (form %q)", c, csrf1)
	}
	second := b.get("/") // tab 2
	if c2 := signinCookieOf(second); c2 == nil || c2.Value != b.csrf || c2.SameSite != http.SameSiteStrictMode {
		t.Fatalf("tab 2's sign-in cookie: %+v (form %q)", c2, b.csrf)
	}
	r := b.post("/signin", url.Values{"token": {opAlice.secret}, "csrf": {csrf1}, "next": {"/q/" + string(q.ID)}})
	if r.status != http.StatusSeeOther || sessionCookie(t, r) == nil {
		t.Fatalf("tab 1 signs in after tab 2 loaded: %d\n%s", r.status, r.body)
	}

	// The form's token without its cookie is refused, as before.
	other := e.browser(e.srv)
	if r := other.post("/signin", url.Values{"token": {opAlice.secret}, "csrf": {csrf1}}); r.status != http.StatusForbidden {
		t.Fatalf("a form's token from another browser: %d", r.status)
	}
	// A planted cookie the console could not have minted is replaced.
	planted := e.browser(e.srv)
	planted.c.Jar.SetCookies(mustURL(t, e.srv.URL), []*http.Cookie{{Name: "askbridge_signin", Value: "planted", Path: "/"}})
	r = planted.get("/")
	if c := signinCookieOf(r); c == nil || c.Value == "planted" || c.Value != planted.csrf || planted.csrf == "planted" {
		t.Fatalf("a malformed sign-in cookie was adopted: %+v (form %q)", c, planted.csrf)
	}
}

var (
	nextField = regexp.MustCompile(`name="next" value="([^"]*)"`)
	ssoLink   = regexp.MustCompile(`id="sso" href="([^"]*)"`)
)

// TestSignInKeepsTheInboxFilters: a filtered or paged inbox link opened
// signed out comes back to the same filters and page after sign-in, by
// token or by the company sign-in; before, the inbox's sign-in form went
// back to "/".
func TestSignInKeepsTheInboxFilters(t *testing.T) {
	e := newEnv(t, nil)
	for _, link := range []string{"/?route=infra&kind=approval", "/?after=abc&from=51", "/"} {
		b := e.browser(e.srv)
		page := b.get(link)
		m := nextField.FindStringSubmatch(page.body)
		if page.status != http.StatusOK || m == nil || html.UnescapeString(m[1]) != link {
			t.Fatalf("%s signed out: %d, next %q", link, page.status, m)
		}
		r := b.post("/signin", url.Values{"token": {opAlice.secret}, "next": {html.UnescapeString(m[1])}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != link {
			t.Fatalf("%s: signed in to %d %q", link, r.status, r.header.Get("Location"))
		}
	}

	o := newOIDCEnv(t)
	o.idp.SignInAs(alice)
	const link = "/?route=alice-only&kind=approval"
	b := o.browser(o.srv)
	m := ssoLink.FindStringSubmatch(b.get(link).body)
	if m == nil || html.UnescapeString(m[1]) != "/oidc/login?next="+url.QueryEscape(link) {
		t.Fatalf("the company sign-in link from %s: %q", link, m)
	}
	u, _ := url.Parse(html.UnescapeString(m[1]))
	r, _ := o.signInOIDC(b, u.Query().Get("next"))
	if r.status != http.StatusOK || !strings.Contains(r.body, `href="`+html.EscapeString(link)+`" id="continue"`) {
		t.Fatalf("the company sign-in went back to:\n%s", r.body)
	}
}

// TestAnOversizedFormIsRefusedAsTooLarge: a post past the console's form
// limit is told it was too large, and nothing is recorded; before, it was
// refused as having no valid CSRF token (or, at sign-in, as an expired
// form), which sent the person to reload and post it again.
func TestAnOversizedFormIsRefusedAsTooLarge(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Run it?", Tool: "deploy",
		Arguments: []byte(`{"a":[]}`), Editable: &core.Editable{All: true}})
	b := e.signedIn(opAlice)
	before := e.eventCount()
	big := `{"a":"` + strings.Repeat("x", 300<<10) + `"}`
	r := b.post("/q/"+string(q.ID)+"/answer", url.Values{"option": {"approve"}, "arguments": {big}})
	if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.body, "too large") ||
		strings.Contains(r.body, "CSRF") || !strings.Contains(r.body, "nothing changed") {
		t.Fatalf("an oversized edit: %d\n%s", r.status, r.body)
	}
	if got := e.get(q.ID); !got.Open() || e.eventCount() != before {
		t.Fatalf("an oversized edit changed the question: %s, %d events", got.State, e.eventCount()-before)
	}
	// The same post within the limit still counts.
	if r := b.post("/q/"+string(q.ID)+"/answer", url.Values{"option": {"approve"}}); r.status != http.StatusOK || e.get(q.ID).Open() {
		t.Fatalf("approve: %d", r.status)
	}

	s := e.browser(e.srv)
	s.get("/")
	r = s.post("/signin", url.Values{"token": {opAlice.secret}, "pad": {strings.Repeat("x", 300<<10)}})
	if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.body, "too large") || sessionCookie(t, r) != nil {
		t.Fatalf("an oversized sign-in: %d\n%s", r.status, r.body)
	}
}

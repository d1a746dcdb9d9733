package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// TestNoResponseMayBeKept: every response but an asset's says no-store,
// redirects and bare errors included. A sign-in's redirect sets the
// session cookie, a sign-out's clears it and a provider's sign-in sets
// its flow's; a shared cache or the browser's back button must never
// hand one of those, or a page of someone's questions, to anyone again.
func TestNoResponseMayBeKept(t *testing.T) {
	o := newOIDCEnv(t)
	e := o.env
	q := e.ask(core.AskInput{Text: "Which?"})
	id := string(q.ID)
	anon := e.browser(e.srv)
	b := e.browser(e.srv)
	b.get("/")
	got := map[string]response{}
	got["the sign-in page"] = anon.get("/")
	got["a page, signed out"] = anon.get("/q/" + id)
	got["a row, signed out"] = anon.get("/rows/" + id)
	got["the stream, signed out"] = anon.get("/stream")
	got["a post, signed out"] = anon.post("/q/"+id+"/answer", url.Values{"text": {"x"}})
	got["the provider's sign-in"] = anon.get("/oidc/login")
	got["the sign-in's redirect"] = b.post("/signin", url.Values{"token": {opAlice.secret}})
	b.get("/") // the session's CSRF token
	got["a path cleaned by a redirect"] = b.get("/q/../closed")
	got["a row the filters leave out"] = b.get("/rows/" + id + "?kind=form")
	got["a row under a bad filter"] = b.get("/rows/" + id + "?kind=bad")
	got["a question's part, bad cursor"] = b.get("/q/" + id + "/part?after=x&n=y")
	got["the stream, bad since"] = b.get("/stream?since=x")
	got["an export, bad date"] = b.get("/closed.csv?from=x")
	got["an unknown asset"] = b.get("/assets/nope.js")
	got["an unknown page"] = b.get("/nope")
	got["another site's post"] = b.post("/q/"+id+"/answer", url.Values{"text": {"x"}}, "Sec-Fetch-Site", "cross-site")
	got["the sign-out's redirect"] = b.post("/signout", nil)
	for what, r := range got {
		if r.status == http.StatusOK && !strings.Contains(what, "page") {
			t.Errorf("%s: %d, want a redirect, an error or no content", what, r.status)
		}
		if cc := r.header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("%s (%d): Cache-Control %q, want no-store", what, r.status, cc)
		}
	}
}

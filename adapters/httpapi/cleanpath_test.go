package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/core"
)

// TestUncleanV1PathIsNoRoute: a path under /v1, as written or once
// cleaned, that has an empty, "." or ".." segment is answered as a path
// nobody serves, in the API's shape (401 without a token, as every /v1
// path is; 404 not_found with one), never with http.ServeMux's redirect
// to the cleaned path. Before, the API's own mux, and the program's
// outer mux in front of it, redirected (307, or 301 on older Go) with a
// text body: a client following it sent its token and body on to a route
// it never named, and one that did not read no error it could parse. The
// outer mux here is wired as the program wires it, with a page at "/" as
// the console is.
func TestUncleanV1PathIsNoRoute(t *testing.T) {
	e := newEnv(t)
	e.api.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>the console</html>", http.StatusNotFound)
	}))
	outer := http.NewServeMux()
	outer.Handle("/", e.api)
	front := httptest.NewServer(e.api.Front(outer))
	t.Cleanup(front.Close)
	// Redirects are not followed: the answer itself is under test.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(base, method, path string, tok *httpapi.Token, body string) raw {
		t.Helper()
		return e.doOn(noFollow, base, method, path, tok, body)
	}
	ask := `{"kind":"clarification","reversibility":"reversible","run_id":"r","question":"Q?"}`
	for _, base := range []struct{ name, url string }{{"the API alone", e.srv.URL}, {"behind the program's mux", front.URL}} {
		for _, c := range []struct{ method, path, body string }{
			{"POST", "//v1/questions", ask},
			{"POST", "/v1//questions", ask},
			{"POST", "/v1/./questions", ask},
			{"POST", "/v1/questions/../questions", ask},
			{"POST", "/x/../v1/questions", ask},
			{"GET", "/v1/questions/../x", ""},
			{"GET", "//v1/retention", ""},
			{"GET", "/v1/retention/", ""},
			{"GET", "/v1/../healthz", ""},
		} {
			before := snapshot(t, e.store)
			r := send(base.url, c.method, c.path, &agentA, c.body)
			if r.status != http.StatusNotFound || errorOf(t, r).Code != core.CodeNotFound || r.header.Get("Location") != "" {
				t.Errorf("%s: %s %s: %d Location=%q %q; want a 404 not_found and no redirect",
					base.name, c.method, c.path, r.status, r.header.Get("Location"), r.body)
			}
			if d := cmp.Diff(before, snapshot(t, e.store)); d != "" {
				t.Errorf("%s: %s %s changed the store (-before +after):\n%s", base.name, c.method, c.path, d)
			}
			if r := send(base.url, c.method, c.path, nil, c.body); r.status != http.StatusUnauthorized || errorOf(t, r).Code != core.CodeForbidden {
				t.Errorf("%s: %s %s without a token: %d %q; want the API's 401", base.name, c.method, c.path, r.status, r.body)
			}
		}
		// Clean paths are served as ever, the console's included.
		if r := send(base.url, "GET", "/v1/retention", &agentA, ""); r.status != http.StatusOK {
			t.Errorf("%s: GET /v1/retention: %d %s", base.name, r.status, r.body)
		}
		if r := send(base.url, "GET", "/console/page", nil, ""); r.status != http.StatusNotFound || !strings.Contains(string(r.body), "the console") {
			t.Errorf("%s: GET /console/page: %d %s; want the page at /", base.name, r.status, r.body)
		}
	}
}

package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

// TestUncleanAPIPathIsNotRedirected: the program answers a path under
// /v1 that needs cleaning with the API's JSON 404, not its outer mux's
// redirect, which would carry the token and body on to a route the
// client never named. Before, serve put the mux in front of the API, so
// the request met a 307 before the API saw it.
func TestUncleanAPIPathIsNotRedirected(t *testing.T) {
	s := apptest.FromEnv(t, nil)
	s.DataDir = "" // the test's own
	m := apptest.Start(t, s)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"//v1/questions", "/v1//questions", "/v1/x/../questions"} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, m.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+m.AdminToken)
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Location") != "" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("GET %s: %d, Location %q, Content-Type %q; want the API's JSON 404, no redirect", path, resp.StatusCode, resp.Header.Get("Location"), resp.Header.Get("Content-Type"))
		}
	}
}

package webhook_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// TestRedirectWithoutLocationIsRefused: a redirect status the client
// follows (301, 302, 303, 307, 308) that names no Location is a redirect
// askbridge does not follow, so it is given up at once, and its error
// names the receiver by the callback's shortened URL, as the other
// refusals do; so is one met after a redirect that was followed. Before,
// the client handed such an answer back as it came, and it was retried
// as any other failing answer until the webhook was a day old.
func TestRedirectWithoutLocationIsRefused(t *testing.T) {
	const token = "s3cret-receiver-token"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hooks/moved" {
			http.Redirect(w, r, "/hooks/307?token="+token, http.StatusTemporaryRedirect)
			return
		}
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hooks/"))
		w.WriteHeader(code) // and no Location
	}))
	defer srv.Close()
	s := plainSender(t, srv.URL+"/hooks/")
	shown := srv.URL + "/hooks/…"
	for _, path := range []string{"/hooks/301", "/hooks/302", "/hooks/303", "/hooks/307", "/hooks/308", "/hooks/moved"} {
		err := call(t, s, srv.URL+path+"?token="+token)
		var perm *core.Permanent
		if !errors.As(err, &perm) || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), shown) {
			t.Errorf("%s: %v; want a permanent refusal naming %s, without the token", path, err, shown)
		}
	}
}

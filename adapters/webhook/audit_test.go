package webhook_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/webhook"
	"github.com/askbridge/askbridge/core"
)

// TestVerifyRefusesAnEmptySecret: a receiver whose secret did not reach
// it (an unset environment variable reads as "") must not take a webhook
// signed under the empty key, which anyone can make. Before, Verify took
// it.
func TestVerifyRefusesAnEmptySecret(t *testing.T) {
	now := time.Now()
	body := []byte(`{"question_id":"q1","state":"answered"}`)
	forged := signed("", "q1/closed", now, body)
	for name, key := range map[string][]byte{"nil": nil, "empty": {}} {
		if err := webhook.Verify(key, forged, body, now, webhook.DefaultTolerance); err == nil || !strings.Contains(err.Error(), "no secret") {
			t.Errorf("%s secret: %v, want a refusal saying there is no secret", name, err)
		}
	}
}

// TestRedirectCarriesNoQuery: the HTTP client names the URL it was
// redirected from in a Referer header, query and all, and the query of a
// callback URL is where a receiver keeps its token. A 307 to another
// allowed host hands that host no Referer; before, it was handed the
// token.
func TestRedirectCarriesNoQuery(t *testing.T) {
	const token = "s3cret-receiver-token"
	referer := make(chan string, 1)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		referer <- r.Header.Get("Referer")
	}))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/hooks/moved", http.StatusTemporaryRedirect)
	}))
	defer first.Close()
	s := plainSender(t, first.URL+"/hooks/", other.URL+"/hooks/")
	if err := call(t, s, first.URL+"/hooks/x?token="+token); err != nil {
		t.Fatalf("a 307 within the list: %v", err)
	}
	if ref := <-referer; ref != "" {
		t.Fatalf("the host redirected to was sent Referer %q", ref)
	}
}

// TestRedirectsUpToFive: the README allows at most five redirects; a
// chain of five reaches its end, one of six is refused for good and its
// end is never called. Before, the fifth was refused, and with it a
// webhook the documentation says is delivered.
func TestRedirectsUpToFive(t *testing.T) {
	var reached atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// /hooks/N redirects to /hooks/N-1; /hooks/0 takes the webhook.
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hooks/"))
		switch {
		case err != nil:
			http.NotFound(w, r)
		case n == 0:
			reached.Add(1)
		default:
			http.Redirect(w, r, "/hooks/"+strconv.Itoa(n-1), http.StatusTemporaryRedirect)
		}
	}))
	defer srv.Close()
	s := plainSender(t, srv.URL+"/hooks/")
	if err := call(t, s, srv.URL+"/hooks/5"); err != nil || reached.Load() != 1 {
		t.Fatalf("five redirects: %v, the end reached %d times", err, reached.Load())
	}
	var perm *core.Permanent
	if err := call(t, s, srv.URL+"/hooks/6"); !errors.As(err, &perm) || reached.Load() != 1 {
		t.Fatalf("six redirects: %v, the end reached %d times; want a permanent refusal short of it", err, reached.Load())
	}
}

// TestBadKeysRefusedAtStart: a sender that may send callbacks but has no
// secret to sign them with, or a secret shorter than the README's 16
// characters, is refused by New and Reconfigure, naming the secret at
// fault, rather than dropping each webhook for good when it is sent. A
// refused Reconfigure leaves the keys in force; callbacks off need no
// secret.
func TestBadKeysRefusedAtStart(t *testing.T) {
	const allow = "https://hooks.example.test/ab/"
	long := []byte("a secret of 16+ chars")
	body := func(*core.Question) ([]byte, error) { return []byte(`{}`), nil }
	for _, c := range []struct {
		name string
		keys webhook.Keys
		want string
	}{
		{"no secret at all", webhook.Keys{}, "no secret"},
		{"route and token secrets, no default", webhook.Keys{Routes: map[string]webhook.RouteKey{"a": {URL: allow + "a", Secret: long}},
			Tokens: map[core.AgentID][]byte{"bot": long}}, "no secret"},
		{"a short default", webhook.Keys{Default: []byte("short")}, "default secret"},
		{"a short route secret", webhook.Keys{Default: long, Routes: map[string]webhook.RouteKey{"a": {URL: allow + "a", Secret: []byte("short")}}}, `route "a"`},
		{"a short token secret", webhook.Keys{Default: long, Tokens: map[core.AgentID][]byte{"bot": []byte("short")}}, `token "bot"`},
	} {
		keys := c.keys
		if _, err := webhook.New(webhook.Options{Allow: core.CallbackPrefixes{allow}, Body: body, Keys: &keys}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New, %s: %v, want an error naming %q", c.name, err, c.want)
		}
		s := plainSender(t, allow)
		if err := s.Reconfigure(core.CallbackPrefixes{allow}, &keys); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Reconfigure, %s: %v, want an error naming %q", c.name, err, c.want)
		}
	}
	if _, err := webhook.New(webhook.Options{Body: body, Keys: &webhook.Keys{}}); err != nil {
		t.Errorf("callbacks off, no secret: %v", err)
	}
	// A refused reload changes nothing: the webhook is still signed
	// with the secret in force.
	recv := newReceiver(t, status(http.StatusOK))
	s := plainSender(t, recv.url())
	if err := s.Reconfigure(core.CallbackPrefixes{recv.url()}, &webhook.Keys{}); err == nil {
		t.Fatal("a reload without a secret was taken")
	}
	if err := call(t, s, recv.url()+"x"); err != nil {
		t.Fatalf("after a refused reload: %v", err)
	}
	if _, _, bad := recv.outcome(); len(bad) > 0 {
		t.Fatalf("after a refused reload the webhook failed verification: %v", bad)
	}
}

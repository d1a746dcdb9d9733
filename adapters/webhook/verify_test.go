package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
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

// signed is a webhook's headers as the README says to make them, written
// out here rather than taken from the adapter.
func signed(key, id string, at time.Time, body []byte) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := func(s string) string {
		m := hmac.New(sha256.New, []byte(key))
		m.Write([]byte(s))
		return hex.EncodeToString(m.Sum(nil))
	}
	h := http.Header{}
	h.Set("Askbridge-Webhook-Id", id)
	h.Set("Askbridge-Webhook-Timestamp", ts)
	h.Set("Askbridge-Webhook-Signature", "v1="+mac(ts+"."+string(body))+",v2="+mac(id+"."+ts+"."+string(body)))
	return h
}

// TestVerify holds the documented check: a fresh, rightly signed webhook
// passes; the same request replayed after the window, one dated ahead by
// more than the window, a changed body, another secret, a garbled
// timestamp and a missing signature are refused.
func TestVerify(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	body := []byte(`{"question_id":"q1","state":"answered"}`)
	good := signed(secret, "q1/closed", now, body)
	tol := webhook.DefaultTolerance
	if err := webhook.Verify([]byte(secret), good, body, now.Add(tol), tol); err != nil {
		t.Fatalf("a rightly signed webhook within the window: %v", err)
	}
	rotated := good.Clone()
	rotated.Set(webhook.HeaderSignature, "v2=00ff, "+good.Get(webhook.HeaderSignature))
	if err := webhook.Verify([]byte(secret), rotated, body, now, tol); err != nil {
		t.Fatalf("one matching signature among several: %v", err)
	}
	// The README's Go check, by the wall clock, agrees.
	const target = "https://hooks.example.com/askbridge/agent-a"
	if !verify([]byte(secret), target, signedFor(secret, "q1/closed", target, time.Now(), body), body) ||
		verify([]byte(secret), target, signedFor(secret, "q1/closed", target, time.Now().Add(-10*time.Minute), body), body) {
		t.Error("the README's check does not take a fresh webhook and refuse a replayed one")
	}
	garbled := good.Clone()
	garbled.Set(webhook.HeaderTimestamp, "yesterday")
	unsigned := good.Clone()
	unsigned.Del(webhook.HeaderSignature)
	for name, c := range map[string]struct {
		h    http.Header
		body []byte
		key  string
		now  time.Time
		want string
	}{
		"replayed after the window": {good, body, secret, now.Add(tol + time.Second), "replay window"},
		"dated ahead":               {signed(secret, "q1/closed", now.Add(tol+time.Minute), body), body, secret, now, "replay window"},
		"body changed":              {good, []byte(`{"question_id":"q1","state":"declined"}`), secret, now, "does not match"},
		"another secret":            {good, body, "another secret", now, "does not match"},
		"garbled timestamp":         {garbled, body, secret, now, "Unix seconds"},
		"no signature":              {unsigned, body, secret, now, "does not match"},
	} {
		err := webhook.Verify([]byte(c.key), c.h, c.body, c.now, tol)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
}

// TestKeys: a route's own callback is signed with the route's secret, a
// callback the ask named with the asking token's, and either falls back
// to the default; with none there is no webhook to sign.
func TestKeys(t *testing.T) {
	k := &webhook.Keys{
		Default: []byte("default"),
		Routes:  map[string]webhook.RouteKey{"deploys": {URL: "https://h.test/deploys", Secret: []byte("route")}, "plain": {URL: "https://h.test/plain"}},
		Tokens:  map[core.AgentID][]byte{"ci": []byte("token")},
	}
	for _, c := range []struct {
		route     string
		agent     core.AgentID
		url, want string
	}{
		{"deploys", "ci", "https://h.test/deploys", "route"},
		{"deploys", "ci", "https://h.test/ci-own", "token"},
		{"deploys", "other", "https://h.test/other-own", "default"},
		{"plain", "ci", "https://h.test/plain", "default"},
		{"default", "ci", "https://h.test/x", "token"},
	} {
		got, err := k.For(&core.Question{Route: c.route, Agent: c.agent}, c.url)
		if err != nil || string(got) != c.want {
			t.Errorf("%s/%s to %s: %q, %v; want %q", c.route, c.agent, c.url, got, err, c.want)
		}
	}
	// A question keeps the route it was asked under: what its own URL
	// was then decides, whatever a reload made of the route since.
	asked := func(url string) json.RawMessage { return json.RawMessage(`{"callback_url":"` + url + `"}`) }
	for _, c := range []struct {
		name, asked, url, want string
	}{
		{"the route's URL moved since", "https://h.test/deploys-old", "https://h.test/deploys-old", "route"},
		{"the agent's own URL, the route's since", "", "https://h.test/deploys", "token"},
	} {
		got, err := k.For(&core.Question{Route: "deploys", Agent: "ci", AskedRoute: asked(c.asked)}, c.url)
		if err != nil || string(got) != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	if _, err := (&webhook.Keys{}).For(&core.Question{Route: "x", Agent: "y"}, "https://h.test/"); err == nil {
		t.Error("no secret at all signed anyway")
	}
}

// plainSender sends a fixed body, to test what the sender does with the
// receiver's answers.
func plainSender(t *testing.T, allow ...string) *webhook.Sender {
	s, err := webhook.New(webhook.Options{Allow: allow, Keys: &webhook.Keys{Default: []byte(secret)},
		Body: func(*core.Question) ([]byte, error) { return []byte(`{"state":"answered"}`), nil }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func call(t *testing.T, s *webhook.Sender, url string) error {
	return s.Call(t.Context(), &core.Question{ID: "q1", Agent: "agent-a", Route: "default"},
		core.Delivery{Key: core.WebhookKey("q1"), Kind: core.DeliverWebhook, Surface: core.SurfaceWebhook, Room: url, QuestionID: "q1"})
}

// TestRedirects: a 307 or 308 within the allow list is followed with the
// body and its signature; one to outside the list, and a 302 (which would
// turn the POST into a GET), are refused for good, and the place they
// point to is never called.
func TestRedirects(t *testing.T) {
	var outside atomic.Int32
	away := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { outside.Add(1) }))
	defer away.Close()
	var final atomic.Value
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hooks/moved":
			http.Redirect(w, r, srv.URL+"/hooks/here", http.StatusPermanentRedirect)
		case "/hooks/away":
			http.Redirect(w, r, away.URL+"/hooks/x", http.StatusTemporaryRedirect)
		case "/hooks/found":
			http.Redirect(w, r, srv.URL+"/hooks/here", http.StatusFound)
		case "/hooks/here":
			if err := webhook.Verify([]byte(secret), r.Header, mustRead(r), time.Now(), webhook.DefaultTolerance); err != nil {
				http.Error(w, err.Error(), http.StatusUnauthorized)
				return
			}
			final.Store(r.Method)
		}
	}))
	defer srv.Close()
	s := plainSender(t, srv.URL+"/hooks/")
	if err := call(t, s, srv.URL+"/hooks/moved"); err != nil {
		t.Fatalf("a 308 within the list: %v", err)
	}
	if m, _ := final.Load().(string); m != http.MethodPost {
		t.Fatalf("the redirected webhook arrived as %q", m)
	}
	for _, path := range []string{"/hooks/away", "/hooks/found"} {
		var perm *core.Permanent
		if err := call(t, s, srv.URL+path); !errors.As(err, &perm) {
			t.Errorf("%s: %v, want a permanent refusal", path, err)
		}
	}
	if n := outside.Load(); n != 0 {
		t.Fatalf("the URL outside the allow list was called %d times", n)
	}
}

func mustRead(r *http.Request) []byte {
	b, _ := io.ReadAll(r.Body)
	return b
}

// TestAnswersClassified: what the receiver answers decides what the
// outbox does next.
func TestAnswersClassified(t *testing.T) {
	at := time.Now().Add(2 * time.Minute).UTC().Format(http.TimeFormat)
	for _, c := range []struct {
		name  string
		serve func(w http.ResponseWriter)
		check func(err error) bool
	}{
		{"200", status(http.StatusOK), func(err error) bool { return err == nil }},
		{"202", status(http.StatusAccepted), func(err error) bool { return err == nil }},
		{"500 retried", status(http.StatusInternalServerError), plainRetry},
		{"429 without Retry-After retried", status(http.StatusTooManyRequests), plainRetry},
		{"404 retried", status(http.StatusNotFound), plainRetry},
		{"429 waits as told", retryAfter(http.StatusTooManyRequests, "7"), func(err error) bool {
			var ra *core.RetryAfter
			return errors.As(err, &ra) && ra.After == 7*time.Second
		}},
		{"503 waits until the date", retryAfter(http.StatusServiceUnavailable, at), func(err error) bool {
			var ra *core.RetryAfter
			return errors.As(err, &ra) && ra.After > time.Minute && ra.After <= 2*time.Minute
		}},
		{"410 given up", status(http.StatusGone), func(err error) bool {
			var perm *core.Permanent
			return errors.As(err, &perm)
		}},
	} {
		recv := newReceiver(t, c.serve)
		if err := call(t, plainSender(t, recv.url()), recv.url()+"x"); !c.check(err) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// A URL the list no longer allows is not called at all.
	recv := newReceiver(t, status(http.StatusOK))
	var perm *core.Permanent
	if err := call(t, plainSender(t, "https://elsewhere.test/"), recv.url()+"x"); !errors.As(err, &perm) || len(recv.requests()) != 0 {
		t.Errorf("a URL off the list: %v, %d requests", err, len(recv.requests()))
	}
}

// plainRetry is an error the outbox retries with backoff: neither a
// wait the receiver named nor a refusal for good.
func plainRetry(err error) bool {
	var ra *core.RetryAfter
	var perm *core.Permanent
	return err != nil && !errors.As(err, &ra) && !errors.As(err, &perm)
}

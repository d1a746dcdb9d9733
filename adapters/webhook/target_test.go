package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/webhook"
	"github.com/askbridge/askbridge/core"
)

// docVerify is the v3 check as the package doc describes it, written
// out here rather than taken from the adapter.
func docVerify(secret []byte, target string, h http.Header, body []byte, now time.Time) bool {
	ts := h.Get("Askbridge-Webhook-Timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if len(secret) == 0 || err != nil || now.Sub(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(h.Get("Askbridge-Webhook-Id") + "." + ts + "." + target + "\n" + string(body)))
	want := "v3=" + hex.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Split(h.Get("Askbridge-Webhook-Signature"), ",") {
		if hmac.Equal([]byte(strings.TrimSpace(sig)), []byte(want)) {
			return true
		}
	}
	return false
}

// signedFor is signed's headers with the v3 value for target added, as
// the package doc says to make it.
func signedFor(key, id, target string, at time.Time, body []byte) http.Header {
	h := signed(key, id, at, body)
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(id + "." + h.Get("Askbridge-Webhook-Timestamp") + "." + target + "\n" + string(body)))
	h.Set("Askbridge-Webhook-Signature", h.Get("Askbridge-Webhook-Signature")+",v3="+hex.EncodeToString(mac.Sum(nil)))
	return h
}

// TestAWebhookReplayedToAnotherReceiverIsRefused: two receivers whose
// webhooks are signed with one secret (webhooks.secret, every callback's
// without a secret of its own), and a request sent to one of them,
// replayed by it (or a proxy before it, or anyone reading its logs) to
// the other within the replay window, under its own event id, which the
// other has never seen. The signature covers the callback URL, so the
// other refuses it, by VerifyTarget and by the package doc's scheme
// written out; the one it was sent to takes it. Before, the signatures
// covered the id, the time and the body alone: the other receiver took
// the replay as a question of its own closing.
func TestAWebhookReplayedToAnotherReceiverIsRefused(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	var got []received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, received{header: r.Header.Clone(), body: body})
		mu.Unlock()
	}))
	defer srv.Close()
	mine, theirs := srv.URL+"/hooks/agent-a?token=a", srv.URL+"/hooks/agent-b?token=b"
	s, err := webhook.New(webhook.Options{Allow: core.CallbackPrefixes{srv.URL + "/hooks/"}, Keys: &webhook.Keys{Default: []byte(secret)},
		Body: func(*core.Question) ([]byte, error) { return []byte(`{"question_id":"q1","state":"answered"}`), nil },
		Now:  func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if err := call(t, s, mine); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	sent := got[0]
	mu.Unlock()
	later := now.Add(time.Minute) // within the window
	if err := webhook.VerifyTarget([]byte(secret), mine, sent.header, sent.body, later, webhook.DefaultTolerance); err != nil ||
		!docVerify([]byte(secret), mine, sent.header, sent.body, later) {
		t.Fatalf("the webhook at the URL it was sent to: %v (the doc's check: %v); signatures %q",
			err, docVerify([]byte(secret), mine, sent.header, sent.body, later), sent.header.Get(webhook.HeaderSignature))
	}
	for _, elsewhere := range []string{theirs, srv.URL + "/hooks/agent-a?token=b", srv.URL + "/hooks/agent-a"} {
		if err := webhook.VerifyTarget([]byte(secret), elsewhere, sent.header, sent.body, later, webhook.DefaultTolerance); err == nil {
			t.Errorf("replayed to %s: VerifyTarget takes it", elsewhere)
		}
		if docVerify([]byte(secret), elsewhere, sent.header, sent.body, later) {
			t.Errorf("replayed to %s: the doc's check takes it", elsewhere)
		}
	}
	// Nor is it taken by the URL it was sent to once the window has
	// passed, or with only its older signatures left.
	if err := webhook.VerifyTarget([]byte(secret), mine, sent.header, sent.body, now.Add(webhook.DefaultTolerance+time.Second), webhook.DefaultTolerance); err == nil {
		t.Error("replayed after the window: VerifyTarget takes it")
	}
	older := sent.header.Clone()
	var kept []string
	for v := range strings.SplitSeq(older.Get(webhook.HeaderSignature), ",") {
		if !strings.HasPrefix(strings.TrimSpace(v), "v3=") {
			kept = append(kept, v)
		}
	}
	older.Set(webhook.HeaderSignature, strings.Join(kept, ","))
	if err := webhook.VerifyTarget([]byte(secret), mine, older, sent.body, later, webhook.DefaultTolerance); err == nil {
		t.Error("with its v3 value stripped: VerifyTarget takes it")
	}
	if err := webhook.VerifyTarget([]byte(secret), "", sent.header, sent.body, later, webhook.DefaultTolerance); err == nil {
		t.Error("VerifyTarget takes a webhook for no URL at all")
	}
}

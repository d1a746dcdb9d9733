package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/webhook"
)

// TestReplayUnderAnotherIDIsRefused: the event id is under the
// signatures (v2 and v3), so a captured webhook replayed within the
// window under a new id, which a receiver's "process each id once" would
// not catch, fails Verify and the README's check, with or without its v2
// value stripped.
// The webhook as sent verifies, and still carries the v1 value receivers
// written before v2 check.
func TestReplayUnderAnotherIDIsRefused(t *testing.T) {
	recv := newReceiver(t, status(200))
	target := recv.url() + "x"
	if err := call(t, plainSender(t, recv.url()), target); err != nil {
		t.Fatal(err)
	}
	got := recv.requests()[0]
	now := time.Now()
	if err := webhook.Verify([]byte(secret), got.header, got.body, now, webhook.DefaultTolerance); err != nil || !verify([]byte(secret), target, got.header, got.body) {
		t.Fatalf("the webhook as sent: %v", err)
	}
	ts := got.header.Get(webhook.HeaderTimestamp)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "." + string(got.body)))
	if v1 := "v1=" + hex.EncodeToString(m.Sum(nil)); !strings.Contains(got.header.Get(webhook.HeaderSignature), v1) {
		t.Fatalf("no v1 value for older receivers: %q", got.header.Get(webhook.HeaderSignature))
	}
	replay := got.header.Clone()
	replay.Set(webhook.HeaderID, got.header.Get(webhook.HeaderID)+"-again")
	stripped := replay.Clone()
	var v1Only []string
	for v := range strings.SplitSeq(replay.Get(webhook.HeaderSignature), ",") {
		if strings.HasPrefix(strings.TrimSpace(v), "v1=") {
			v1Only = append(v1Only, v)
		}
	}
	stripped.Set(webhook.HeaderSignature, strings.Join(v1Only, ","))
	for name, h := range map[string]http.Header{"replayed under another id": replay, "and its v2 stripped": stripped} {
		if err := webhook.Verify([]byte(secret), h, got.body, now, webhook.DefaultTolerance); err == nil {
			t.Errorf("%s: Verify takes it", name)
		}
		if verify([]byte(secret), target, h, got.body) {
			t.Errorf("%s: the README's check takes it", name)
		}
	}
}

package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/webhook"
)

// The README's Go check of a webhook ("Webhooks"), copied here byte for
// byte, so that what receivers are told to write is what the tests
// check every webhook with (receiver.verify). TestTheREADMEsRecipeIsTheOneTested
// keeps the two the same.

func verify(secret []byte, myURL string, h http.Header, body []byte) bool {
	if len(secret) == 0 {
		return false // an unset secret would take a signature anyone can make
	}
	ts := h.Get("Askbridge-Webhook-Timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		return false // outside the replay window
	}
	id := h.Get("Askbridge-Webhook-Id")
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(id + "." + ts + "." + myURL + "\n" + string(body)))
	want := "v3=" + hex.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Split(h.Get("Askbridge-Webhook-Signature"), ",") {
		if hmac.Equal([]byte(strings.TrimSpace(sig)), []byte(want)) {
			return true
		}
	}
	return false
}

// readmeRecipe is the README's Go block that follows its "In Go" line.
func readmeRecipe(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "In Go (or call `webhook.VerifyTarget`")
	if ok {
		_, rest, ok = strings.Cut(rest, "```go\n")
	}
	block, _, closed := strings.Cut(rest, "```")
	if !ok || !closed || !strings.HasPrefix(block, "func verify(") {
		t.Fatal("the README has no Go block of a verify function after its \"In Go\" line")
	}
	return block
}

// TestTheREADMEsRecipeIsTheOneTested: the Go check the README gives
// receivers is, byte for byte, the verify above, with which every
// webhook the tests send is checked. Before, the tests checked webhooks
// with a helper said to be "the README's Go example, as written there"
// that was an older one (the v2 signature, no URL): the check the README
// gives, v3 over the callback URL, was never run against a webhook.
func TestTheREADMEsRecipeIsTheOneTested(t *testing.T) {
	src, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if recipe := readmeRecipe(t); !strings.Contains(string(src), "\n"+recipe) {
		t.Fatalf("the README's Go check is not verify in readme_test.go; the README's:\n%s", recipe)
	}
}

// TestTheREADMEsRecipeTakesWhatIsSentAndNoReplay: a webhook as the
// Sender sends it passes the README's check at the callback URL it was
// sent to; the same request checked at another receiver's URL (one that
// shares the secret), under another event id, with its body changed, or
// under another secret does not.
func TestTheREADMEsRecipeTakesWhatIsSentAndNoReplay(t *testing.T) {
	recv := newReceiver(t, status(http.StatusOK))
	target := recv.url() + "agent-a?token=t1"
	if err := call(t, plainSender(t, recv.url()), target); err != nil {
		t.Fatal(err)
	}
	got := recv.requests()[0]
	if !verify([]byte(secret), target, got.header, got.body) {
		t.Fatalf("the README's check refuses the webhook as sent: %v", got.header)
	}
	if _, _, bad := recv.outcome(); len(bad) != 0 {
		t.Fatalf("the receiver refused: %v", bad)
	}
	renamed := got.header.Clone()
	renamed.Set(webhook.HeaderID, got.header.Get(webhook.HeaderID)+"-again")
	for name, c := range map[string]struct {
		secret, url string
		h           http.Header
		body        []byte
	}{
		"at another receiver":  {secret, recv.url() + "agent-b?token=t1", got.header, got.body},
		"under another id":     {secret, target, renamed, got.body},
		"with a changed body":  {secret, target, got.header, append([]byte(" "), got.body...)},
		"under another secret": {"another secret of the tests", target, got.header, got.body},
		"with no secret":       {"", target, got.header, got.body},
	} {
		if verify([]byte(c.secret), c.url, c.h, c.body) {
			t.Errorf("%s: the README's check takes it", name)
		}
	}
}

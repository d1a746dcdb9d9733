package console_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// storedCSRF is the session's own CSRF token as the store keeps it, read
// under the digest of b's session cookie.
func storedCSRF(t *testing.T, e *env, b *browser) string {
	t.Helper()
	var cookie string
	for _, c := range b.c.Jar.Cookies(mustURL(t, b.base)) {
		if c.Name == "askbridge_session" {
			cookie = c.Value
		}
	}
	sum := sha256.Sum256([]byte(cookie))
	raw, err := e.store.Value(t.Context(), "console:session:"+hex.EncodeToString(sum[:]))
	if err != nil || raw == "" {
		t.Fatalf("no session in the store for the browser's cookie: %q, %v", raw, err)
	}
	var sess struct {
		CSRF string `json:"csrf"`
	}
	if err := json.Unmarshal([]byte(raw), &sess); err != nil || sess.CSRF == "" {
		t.Fatalf("the stored session has no CSRF token: %s (%v)", raw, err)
	}
	return sess.CSRF
}

// The pages are gzipped and echo the query's filters beside the CSRF
// token, which is what a compression side channel (BREACH) needs to read
// the token byte by byte. So no page carries the token itself: each
// carries it under a fresh one-time mask, and every masking of the
// session's token, and nothing else, is taken.
func TestTheCSRFTokenIsMaskedAfreshInEveryResponse(t *testing.T) {
	e := newEnv(t, nil)
	alice := e.signedIn(opAlice)
	raw := storedCSRF(t, e, alice)

	alice.get("/?agent=" + url.QueryEscape(raw[:8])) // a filter echoed beside the token
	first := alice.csrf
	alice.get("/?agent=" + url.QueryEscape(raw[:8]))
	second := alice.csrf
	if first == second {
		t.Fatalf("two responses served the same token %q", first)
	}
	for _, served := range []string{first, second} {
		if strings.Contains(served, raw) {
			t.Fatalf("a page served the session's token as it is: %q", served)
		}
		// Served is mask || (mask XOR token), base64url: unmasked, it is
		// the session's token.
		b, err := base64.RawURLEncoding.DecodeString(served)
		if err != nil || len(b) != 64 {
			t.Fatalf("served token %q is not 64 bytes of base64url: %d, %v", served, len(b), err)
		}
		for i := range 32 {
			b[32+i] ^= b[i]
		}
		if got := base64.RawURLEncoding.EncodeToString(b[32:]); got != raw {
			t.Fatalf("served token unmasks to %q, want the session's %q", got, raw)
		}
	}

	// Both maskings of the one token count: the older page's form too.
	for i, served := range []string{first, second} {
		q := e.ask(core.AskInput{Text: "Which zone?"})
		if r := alice.post("/q/"+string(q.ID)+"/answer", url.Values{"text": {"a"}, "csrf": {served}}); r.status != http.StatusOK || e.get(q.ID).Open() {
			t.Fatalf("page %d's token: %d\n%s", i+1, r.status, r.body)
		}
	}
}

// Anything but a masking of the session's own token is refused, with the
// words of a wrong token: a malformed one says nothing of its shape.
func TestOnlyAMaskedCopyOfTheSessionsCSRFTokenIsTaken(t *testing.T) {
	e := newEnv(t, nil)
	alice := e.signedIn(opAlice)
	first := alice.csrf
	raw := storedCSRF(t, e, alice)
	q := e.ask(core.AskInput{Text: "Which region?"})
	events := e.eventCount()
	path := "/q/" + string(q.ID) + "/answer"
	wrong := alice.post(path, url.Values{"text": {"eu"}, "csrf": {"forged"}})
	if wrong.status != http.StatusForbidden {
		t.Fatalf("a wrong token: %d, want 403", wrong.status)
	}
	bob := e.signedIn(opBob)
	// One character of the masked half for another base64url one, clear
	// of the last character's spare bits.
	tampered := []byte(first)
	i := len(first)/2 + 1
	tampered[i] = 'A'
	if first[i] == 'A' {
		tampered[i] = 'B'
	}
	for name, token := range map[string]string{
		"empty":       "",
		"short":       first[:len(first)-1],
		"long":        first + "A",
		"padded":      first + "==",
		"not base64":  strings.Repeat("!", len(first)),
		"tampered":    string(tampered),
		"mask only":   first[:43],
		"another's":   bob.csrf,
		"doubled raw": raw + raw,
		// The token as the store keeps it, as pages served it before
		// they masked it: refused, so that only a masked copy (which no
		// compression probe can converge on) is ever a credential. A
		// page loaded from a replica of the old version, posted to a new
		// one in a rolling upgrade, is refused once like an expired form;
		// what was typed is kept, and a reload brings a masked token.
		"unmasked": raw,
	} {
		r := alice.post(path, url.Values{"text": {"eu"}, "csrf": {token}})
		if r.status != wrong.status || r.body != wrong.body {
			t.Errorf("%s token: %d, want the wrong token's refusal (%d) word for word\n%s", name, r.status, wrong.status, r.body)
		}
	}
	if n := e.eventCount(); n != events || !e.get(q.ID).Open() {
		t.Fatalf("a refused token changed the question (%d events)", n-events)
	}
	if r := alice.post(path, url.Values{"text": {"eu-west-1"}}); r.status != http.StatusOK || e.get(q.ID).Open() {
		t.Fatalf("the page's own token: %d\n%s", r.status, r.body)
	}
}

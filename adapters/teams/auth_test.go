package teams

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/teams/teamsfake"
)

// keysDoc serves a keys document listing kids, each endorsed for msteams,
// failing the first fail reads with 503.
func keysDoc(t *testing.T, fail int32, kids ...string) *httptest.Server {
	var reads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reads.Add(1) <= fail {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		body := `{"keys":[`
		for i, k := range kids {
			if i > 0 {
				body += ","
			}
			body += `{"kid":"` + k + `","endorsements":["msteams"]}`
		}
		_, _ = w.Write([]byte(body + "]}"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// rotated is a verifier that read the endorsements of key "old" two
// minutes ago, when a token signed with key "new" comes.
func rotated(srv *httptest.Server) *verifier {
	v := newVerifier("", "app", srv.Client(), time.Now, zerolog.Nop())
	v.jwks = srv.URL
	v.endorse = map[string][]string{"old": {"msteams"}}
	v.readAt = time.Now().Add(-2 * time.Minute)
	return v
}

// TestEndorsementsReadAgainAfterAFailedRead: a read of the keys document
// that fails leaves the next request free to read it again; before, the
// failed read counted as the minute's one, and every token signed with
// the new key was refused until the minute passed.
func TestEndorsementsReadAgainAfterAFailedRead(t *testing.T) {
	v := rotated(keysDoc(t, 1, "old", "new"))
	_ = v.endorsed(t.Context(), "new", "msteams") // its reads: one failed, one read
	if !v.endorsed(t.Context(), "new", "msteams") {
		t.Fatal("the new key is refused after a failed read of the keys document")
	}
}

// TestEndorsementsReadOutlivesItsRequest: the read a request needed goes
// on when that request's caller hangs up, and the key is endorsed;
// before, the read stopped with the request and the new key stayed
// refused for a minute.
func TestEndorsementsReadOutlivesItsRequest(t *testing.T) {
	v := rotated(keysDoc(t, 0, "old", "new"))
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	if !v.endorsed(gone, "new", "msteams") {
		t.Fatal("a request whose caller hung up stopped the read of the endorsements")
	}
	if !v.endorsed(t.Context(), "new", "msteams") {
		t.Fatal("the new key is refused after its read")
	}
}

// TestSigningKeysAreReadAgainAtStart: start keeps trying until the
// signing keys themselves are read, not just the metadata naming them.
// Before, a keys document that failed its first read was taken as read:
// start reported the keys fetched and returned, and every token was
// refused until keyfunc's own refresh (at most once in five minutes, or
// hourly) happened to read them.
func TestSigningKeysAreReadAgainAtStart(t *testing.T) {
	fake := teamsfake.Start(t, "app", "secret")
	var reads atomic.Int32
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/openid":
			_ = json.NewEncoder(w).Encode(map[string]string{"issuer": Issuer, "jwks_uri": srv.URL + "/keys"})
		case "/keys":
			if reads.Add(1) <= 3 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"keys": []any{fake.JWK()}})
		}
	}))
	t.Cleanup(srv.Close)
	v := newVerifier(srv.URL+"/openid", "app", srv.Client(), time.Now, zerolog.Nop())
	retries := 0
	if err := v.start(t.Context(), func(int, error) bool { retries++; return true }); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, MessagesPath, nil)
	r.Header.Set("Authorization", "Bearer "+fake.Sign(teamsfake.Token{}))
	tok, err := v.verify(r)
	if err != nil {
		t.Fatalf("a genuine token refused after start (%d retries, %d reads): %v", retries, reads.Load(), err)
	}
	if err := v.admits(t.Context(), tok, fake.URL(), channelTeams); err != nil {
		t.Fatalf("a genuine token's activity refused after start: %v", err)
	}
	if retries == 0 {
		t.Fatal("start never retried, yet the keys failed their first reads")
	}
}

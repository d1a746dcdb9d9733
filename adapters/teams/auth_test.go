package teams

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
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
	v := newVerifier("", "app", srv.Client(), time.Now)
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

package teams

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/teams/teamsfake"
)

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
	if err := v.admits(tok, fake.URL(), channelTeams); err != nil {
		t.Fatalf("a genuine token's activity refused after start: %v", err)
	}
	if retries == 0 {
		t.Fatal("start never retried, yet the keys failed their first reads")
	}
}

// keySite serves OpenID metadata and a keys document whose keys the test
// changes as it goes. Each read of the keys counts; one a test waits for
// (waitRead) is signalled before its document is written. The first read
// after hold is set is held there: it says so on arrived and waits for
// release to be closed.
type keySite struct {
	srv   *httptest.Server
	reads atomic.Int32
	read  chan struct{}

	mu   sync.Mutex
	keys []map[string]any
	hold *gate
}

type gate struct{ arrived, release chan struct{} }

func newKeySite(t *testing.T, keys ...map[string]any) *keySite {
	s := &keySite{keys: keys, read: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/openid":
			_ = json.NewEncoder(w).Encode(map[string]string{"issuer": Issuer, "jwks_uri": s.srv.URL + "/keys"})
		case "/keys":
			s.reads.Add(1)
			select {
			case s.read <- struct{}{}:
			default:
			}
			s.mu.Lock()
			doc, g := map[string]any{"keys": s.keys}, s.hold
			s.hold = nil
			s.mu.Unlock()
			if g != nil {
				g.arrived <- struct{}{}
				<-g.release
			}
			_ = json.NewEncoder(w).Encode(doc)
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *keySite) publish(keys ...map[string]any) {
	s.mu.Lock()
	s.keys = keys
	s.mu.Unlock()
}

// waitRead waits for a read of the keys that starts after the call.
func (s *keySite) waitRead() { <-s.read }

// rekeyed is the fake's key as JWK lists it, with kid and endorsements
// changed.
func rekeyed(fake *teamsfake.Server, kid string, endorsements ...string) map[string]any {
	k := maps.Clone(fake.JWK())
	k["kid"], k["endorsements"] = kid, endorsements
	return k
}

// startOn starts a verifier on site's keys, refreshed every refresh.
func startOn(t *testing.T, site *keySite, refresh time.Duration) *verifier {
	t.Helper()
	v := newVerifier(site.srv.URL+"/openid", "app", site.srv.Client(), time.Now, zerolog.Nop())
	v.refreshEvery = refresh
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := v.start(ctx, func(int, error) bool { return false }); err != nil {
		t.Fatal(err)
	}
	return v
}

// bearing is a request with token as its bearer.
func bearing(token string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, MessagesPath, nil)
	r.Header.Set("Authorization", "Bearer "+token)
	return r
}

// TestEndorsementsAreRefreshedWithTheKeys: a key Microsoft stops
// endorsing for Teams is refused once the keys are next read, as they
// are every hour. Before, endorsements were read again only when a
// token named a key not seen before, so a changed endorsement on a key
// in use was never seen.
func TestEndorsementsAreRefreshedWithTheKeys(t *testing.T) {
	fake := teamsfake.Start(t, "app", "secret")
	site := newKeySite(t, rekeyed(fake, "k1", channelTeams))
	v := startOn(t, site, time.Millisecond) // the test's stand-in for an hour
	if !v.endorsed("k1", channelTeams) {
		t.Fatal("the key is not endorsed at start")
	}
	site.publish(rekeyed(fake, "k1", "webchat"))
	// The keys are read one after another: once a second read starts,
	// the first, all of whose document is the new one, is done.
	site.waitRead()
	site.waitRead()
	if v.endorsed("k1", channelTeams) {
		t.Fatal("a key no longer endorsed for Teams is still taken for it after the keys were read again")
	}
}

// TestJunkTokensLeaveTheKeyReadForARotation: a token whose claims fail
// (here its audience is another app's) is refused before its key is
// looked up, so a made-up key id in it does not spend the one read of
// the keys a key not seen before may cause every five minutes; a
// genuine token signed with a key rotated in just after still finds it.
// Before, the made-up key id spent that read, and tokens of the new key
// were refused for five minutes.
func TestJunkTokensLeaveTheKeyReadForARotation(t *testing.T) {
	fake := teamsfake.Start(t, "app", "secret")
	other, err := teamsfake.OtherKey()
	if err != nil {
		t.Fatal(err)
	}
	site := newKeySite(t, rekeyed(fake, "k1", channelTeams))
	v := startOn(t, site, time.Hour)
	before := site.reads.Load()
	junk := fake.Sign(teamsfake.Token{Key: other, KID: "made-up", Audience: "someone-else"})
	if _, err := v.verify(bearing(junk)); err == nil {
		t.Fatal("a junk token was taken")
	}
	if n := site.reads.Load() - before; n != 0 {
		t.Fatalf("a junk token had the keys read %d times", n)
	}
	site.publish(rekeyed(fake, "k1", channelTeams), rekeyed(fake, "k2", channelTeams))
	tok, err := v.verify(bearing(fake.Sign(teamsfake.Token{KID: "k2", Audience: "app"})))
	if err != nil {
		t.Fatalf("a genuine token of a key rotated in is refused: %v", err)
	}
	if err := v.admits(tok, fake.URL(), channelTeams); err != nil {
		t.Fatalf("a genuine token of a key rotated in is refused: %v", err)
	}
	// Still refused for its claims, however its key fares.
	if _, err := v.verify(bearing(junk)); !errors.Is(err, jwt.ErrTokenInvalidAudience) {
		t.Fatalf("a junk token refused for %v; want its claims", err)
	}
}

// TestKeyReadOutlivesItsRequest: a read of the keys that a token of a
// key rotated in set off goes on when its caller hangs up, and the key
// counts for the next token. Before, the read stopped with the request
// yet used up the one read in five minutes, and tokens of the new key
// were refused until those had passed.
func TestKeyReadOutlivesItsRequest(t *testing.T) {
	fake := teamsfake.Start(t, "app", "secret")
	site := newKeySite(t, rekeyed(fake, "k1", channelTeams))
	v := startOn(t, site, time.Hour)
	site.publish(rekeyed(fake, "k1", channelTeams), rekeyed(fake, "k2", channelTeams))
	g := &gate{arrived: make(chan struct{}), release: make(chan struct{})}
	site.mu.Lock()
	site.hold = g
	site.mu.Unlock()
	token := fake.Sign(teamsfake.Token{KID: "k2"})
	ctx, hangUp := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = v.verify(bearing(token).WithContext(ctx))
	}()
	<-g.arrived // the read the token set off
	hangUp()
	close(g.release)
	<-done
	tok, err := v.verify(bearing(token))
	if err != nil {
		t.Fatalf("a token of the key rotated in is refused after an earlier caller hung up: %v", err)
	}
	if err := v.admits(tok, fake.URL(), channelTeams); err != nil {
		t.Fatalf("a token of the key rotated in is refused after an earlier caller hung up: %v", err)
	}
}

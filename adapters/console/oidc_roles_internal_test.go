package console

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// TestOIDCRolesRefusedInNameOrder: several groups mapped to roles that
// are not are refused for the first group by name, every time.
func TestOIDCRolesRefusedInNameOrder(t *testing.T) {
	c := OIDC{Issuer: "https://login.example.com", ClientID: "askbridge", RedirectURL: "https://askbridge.example.com/oidc/callback",
		People: noPeople{}, Roles: map[string]Role{"sre": "root", "ops": "boss", "dev": "king", "qa": "chief"}}
	for range 30 {
		if _, err := newIDP(c); err == nil || !strings.Contains(err.Error(), `OIDC group "dev" maps to "king"`) {
			t.Fatalf("newIDP: %v; want group dev's refusal", err)
		}
	}
}

// noPeople configures nobody.
type noPeople struct{}

func (noPeople) ByClaim(string) (string, bool) { return "", false }
func (noPeople) Exists(string) bool            { return false }

// TestOIDCDiscoveryIsShared: sign-ins that need the provider while its
// discovery is on its way wait for that one discovery and share its
// outcome; before, each ran its own, one after another under a lock, so
// with the provider unreachable the n-th sign-in waited n timeouts.
func TestOIDCDiscoveryIsShared(t *testing.T) {
	var hits atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		<-release
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	d, err := newIDP(OIDC{Issuer: srv.URL, ClientID: "askbridge", RedirectURL: "https://askbridge.example.com/oidc/callback", People: noPeople{}})
	if err != nil {
		t.Fatal(err)
	}
	const signIns = 5
	errs := make(chan error, signIns)
	for range signIns {
		go func() {
			_, err := d.provider(t.Context())
			errs <- err
		}()
	}
	// Every sign-in waits on the one discovery (a goroutine still on its
	// way into DoChan when the discovery fails would start a second: the
	// test, not the code, would then be wrong), and that discovery is at
	// the provider.
	for inProvider() < signIns || hits.Load() < 1 {
		runtime.Gosched()
	}
	close(release)
	for range signIns {
		if err := <-errs; err == nil {
			t.Fatal("a discovery of a provider that is down succeeded")
		}
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("%d discoveries for %d sign-ins at once; want one, shared", n, signIns)
	}
}

// inProvider counts the goroutines waiting in idp.provider's select for
// the shared discovery's answer.
func inProvider() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, " [select") && strings.Contains(g, "console.(*idp).provider(") {
			n++
		}
	}
	return n
}

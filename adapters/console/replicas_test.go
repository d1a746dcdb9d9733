package console_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/console"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestSessionsWorkOnEveryReplicaOnRedis: two replicas, each with its own
// connection to one Redis, as a scaled-out deployment runs. A session made
// on one is known to the other, and signing out on one ends it on both.
func TestSessionsWorkOnEveryReplicaOnRedis(t *testing.T) {
	url := redistest.Start(t).URL()
	toks := &tokens{}
	toks.set(opAlice)
	replica := func() *httptest.Server {
		st, err := redisstore.Open(t.Context(), url, redisstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		svc, err := core.New(st, core.Config{Routes: openRoutes(), ActorKey: []byte("k")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := console.New(svc, console.Options{Tokens: toks, Log: zerolog.Nop()})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(c)
		t.Cleanup(func() { c.Drain(); srv.Close() })
		return srv
	}
	a, b := replica(), replica()
	e := &env{t: t}
	onA := e.browser(a)
	if r := onA.signIn(opAlice.secret); r.status != http.StatusSeeOther {
		t.Fatalf("sign in on A: %d", r.status)
	}
	onB := onA.on(b)
	if r := onB.get("/"); r.status != http.StatusOK || !strings.Contains(r.body, "ops-alice") {
		t.Fatalf("B does not know A's session: %d", r.status)
	}
	old := onA.c.Jar.Cookies(mustURL(t, a.URL))
	if r := onB.post("/signout", nil); r.status != http.StatusSeeOther {
		t.Fatalf("sign out on B: %d", r.status)
	}
	// The cookie the browser had before signing out, replayed on A.
	onA.c.Jar.SetCookies(mustURL(t, a.URL), old)
	if r := onA.get("/"); r.status != http.StatusOK || strings.Contains(r.body, "ops-alice") {
		t.Fatalf("A still honours the session B ended: %d", r.status)
	}
}

// TestDrainEndsStreams: a stopping replica ends its event streams at once,
// so the shutdown does not wait on them; the page reconnects elsewhere.
func TestDrainEndsStreams(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	c, err := console.New(e.svc, e.opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c)
	defer srv.Close()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/stream", nil)
	for _, ck := range b.c.Jar.Cookies(mustURL(t, e.srv.URL)) {
		req.AddCookie(ck)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := resp.Body.Read(buf); err != nil {
				done <- err
				return
			}
		}
	}()
	c.Drain()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the stream outlived Drain")
	}
}

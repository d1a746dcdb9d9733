package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/console"
	"github.com/askbridge/askbridge/core"
)

// racingValues runs hook once, in the middle of a request: at a read
// ("read", just after it) or write ("write", just before it) of a
// session, past the first skip of them, so a test can sign out while a
// request is in flight.
type racingValues struct {
	*spyValues
	mu   sync.Mutex
	at   string
	skip int
	hook func()
}

func (v *racingValues) fire(at, key string) {
	if !strings.HasPrefix(key, "console:session:") {
		return
	}
	v.mu.Lock()
	f := v.hook
	switch {
	case v.at != at:
		f = nil
	case v.skip > 0:
		v.skip, f = v.skip-1, nil
	default:
		v.hook = nil
	}
	v.mu.Unlock()
	if f != nil {
		f()
	}
}

func (v *racingValues) Value(ctx context.Context, key string) (string, error) {
	raw, err := v.spyValues.Value(ctx, key)
	v.fire("read", key)
	return raw, err
}

func (v *racingValues) SetValueFor(ctx context.Context, key, val string, ttl time.Duration) error {
	v.fire("write", key)
	return v.spyValues.SetValueFor(ctx, key, val, ttl)
}

// TestSignOutIsNotUndoneByARequestInFlight: a request that read its
// session before a sign-out and writes it after (a renewal, or the
// "while you were away" banner being spent) neither brings the session
// back nor sends its cookie again; before, the write put the session back
// in the store and the signed-out cookie worked for another idle time.
func TestSignOutIsNotUndoneByARequestInFlight(t *testing.T) {
	for _, c := range []struct {
		name, at    string
		away, renew bool
	}{
		{"a renewal, signed out after its read", "read", false, true},
		{"a renewal, signed out before its write", "write", false, true},
		{"the away banner, signed out before its write", "write", true, false},
		{"the away banner after a renewal, signed out before its write", "write", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, nil)
			e.ask(core.AskInput{Text: "Which region?"})
			rv := &racingValues{spyValues: e.store}
			opts := e.opts
			opts.Values = rv
			con, err := console.New(e.svc, opts)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(con)
			t.Cleanup(func() { con.Drain(); srv.Close() })

			if c.away { // a visit before this one, so the inbox has a banner to spend
				e.browser(srv).signIn(opAlice.secret)
				e.clock.Advance(30 * time.Second) // within the renewal interval
			}
			b := e.browser(srv)
			in := b.signIn(opAlice.secret)
			cookie := sessionCookie(t, in)
			if in.status != http.StatusSeeOther || cookie == nil {
				t.Fatalf("sign in: %d", in.status)
			}
			if r := b.get("/closed"); !strings.Contains(r.body, "ops-alice") { // the session's CSRF token
				t.Fatalf("signed in: %d", r.status)
			}
			skip := 0
			if c.renew {
				e.clock.Advance(2 * time.Minute) // the next use renews the session
				if c.away {
					skip = 1 // the renewal's write goes through; the banner's does not
				}
			}
			out := 0
			rv.mu.Lock()
			rv.at, rv.skip, rv.hook = c.at, skip, func() { out = b.post("/signout", nil).status }
			rv.mu.Unlock()

			r := b.get("/")
			if out != http.StatusSeeOther {
				t.Fatalf("the sign-out in the middle did not happen: %d", out)
			}
			if sc := sessionCookie(t, r); sc != nil {
				t.Fatalf("the request in flight sent the signed-out cookie again: %+v", sc)
			}
			old := e.browser(srv)
			old.c.Jar.SetCookies(mustURL(t, srv.URL), []*http.Cookie{{Name: "askbridge_session", Value: cookie.Value, Path: "/"}})
			if after := old.get("/"); strings.Contains(after.body, "ops-alice") || strings.Contains(after.body, "Which region?") {
				t.Fatalf("the signed-out cookie works again: %d", after.status)
			}
		})
	}
}

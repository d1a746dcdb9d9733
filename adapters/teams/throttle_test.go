package teams

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2/clientcredentials"

	"github.com/askbridge/askbridge/core"
)

// TestThrottlingWithoutAWaitBacksOff: 429s in a row in one conversation
// that name no wait are waited out longer each time (exponentially, at
// random within bounds, at most a minute), another conversation's start
// again from the first wait, a call that works starts its conversation
// again too, and a Retry-After, in seconds or as a date by the adapter's
// clock, is kept to as it is. Before, every 429 without a Retry-After
// waited one second, however long Teams went on throttling, which Teams
// asks bots not to do (and the outbox, counting no attempt for a 429,
// never backed off either).
func TestThrottlingWithoutAWaitBacksOff(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	answer := map[string]func(w http.ResponseWriter){} // by conversation
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"access_token":"t","token_type":"Bearer","expires_in":3600}`))
			return
		}
		conv := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v3/conversations/"), "/activities")
		mu.Lock()
		serve := answer[conv]
		mu.Unlock()
		if serve == nil {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		serve(w)
	}))
	defer srv.Close()
	c := newConnector(srv.URL, clientcredentials.Config{ClientID: "app", ClientSecret: "s", TokenURL: srv.URL + "/token"}, srv.Client())
	c.now = func() time.Time { return now }
	wait := func(conv string) time.Duration {
		t.Helper()
		_, err := c.send(t.Context(), conv, &Activity{Type: "message", Text: "hi"})
		var ra *core.RetryAfter
		if !errors.As(err, &ra) {
			t.Fatalf("a 429 in %s: %v (%T), not a wait", conv, err, err)
		}
		return ra.After
	}
	within := func(what string, got, ceil time.Duration) {
		t.Helper()
		if got < ceil/2 || got > ceil {
			t.Errorf("%s: waits %v, want between %v and %v", what, got, ceil/2, ceil)
		}
	}

	// Eight in a row: 1-2s, 2-4s, 4-8s, 8-16s, 16-32s, then 30-60s.
	for i, ceil := range []time.Duration{2, 4, 8, 16, 32, 60, 60, 60} {
		within(fmt.Sprintf("429 number %d in a row", i+1), wait("busy"), ceil*time.Second)
	}
	// Another conversation is throttled apart.
	within("the first 429 in another conversation", wait("calm"), 2*time.Second)

	// A Retry-After is kept to, mid-streak: in seconds, or as a date
	// read by the adapter's clock.
	mu.Lock()
	answer["busy"] = func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
	}
	answer["dated"] = func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", now.Add(90*time.Second).Format(http.TimeFormat))
		w.WriteHeader(http.StatusTooManyRequests)
	}
	mu.Unlock()
	if got := wait("busy"); got != 7*time.Second {
		t.Errorf("a 429 naming 7s waits %v", got)
	}
	if got := wait("dated"); got != 90*time.Second {
		t.Errorf("a 429 naming a date 90s from the adapter's clock waits %v", got)
	}

	// A call that works ends the streak.
	mu.Lock()
	answer["busy"] = func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":"1"}`))
	}
	mu.Unlock()
	if _, err := c.send(t.Context(), "busy", &Activity{Type: "message", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	answer["busy"] = nil
	mu.Unlock()
	within("the first 429 after a call that worked", wait("busy"), 2*time.Second)

	// The waits are drawn at random, so the conversations throttled
	// together do not all come back at once.
	seen := map[time.Duration]bool{}
	for i := range 20 {
		seen[wait("fresh-"+strconv.Itoa(i))] = true
	}
	if len(seen) < 2 {
		t.Errorf("twenty conversations' first 429s all wait the same: %v", seen)
	}
}

// TestThrottleForgetsBeyondItsBound: the conversations remembered are
// bounded (DESIGN law 9); one forgotten starts again from the first wait.
func TestThrottleForgetsBeyondItsBound(t *testing.T) {
	var th throttle
	for i := range throttleConvs + 10 {
		th.wait(strconv.Itoa(i), 0)
	}
	if n := len(th.streak); n > throttleConvs {
		t.Fatalf("%d conversations remembered, bound %d", n, throttleConvs)
	}
}

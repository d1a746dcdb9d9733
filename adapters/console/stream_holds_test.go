package console_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// openStream follows /stream as b and returns its lines as they come,
// once it has said "ready"; the channel closes when the response ends.
func openStream(t *testing.T, b *browser) <-chan string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, b.base+"/stream?since=0", nil)
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	lines := make(chan string, 256)
	go func() {
		defer close(lines)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if sc.Text() != "" {
				lines <- sc.Text()
			}
		}
	}()
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the stream ended before ready")
			}
			if l == "event: ready" {
				return lines
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no ready within 10s")
		}
	}
}

// TestTheStreamEndsWithItsSession: README, sessions end on sign-out and
// when their token is removed or given a new secret. A page's stream is
// that session at work, so it ends too, before it tells the page of
// anything that happened since; another session's stream goes on.
func TestTheStreamEndsWithItsSession(t *testing.T) {
	for _, c := range []struct {
		name string
		end  func(e *env, b *browser)
	}{
		{"sign-out", func(e *env, b *browser) {
			if r := b.post("/signout", nil); r.status != http.StatusSeeOther {
				t.Fatalf("sign out: %d", r.status)
			}
		}},
		{"token removed", func(e *env, _ *browser) { e.tokens.set(opBob, root) }},
		{"new secret", func(e *env, _ *browser) {
			renewed := opAlice
			renewed.secret = "renewed-ops-alice-0123456789" // the test stamp is the first 12 bytes
			e.tokens.set(renewed, opBob, root)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, nil)
			alice, bob := e.signedIn(opAlice), e.signedIn(opBob)
			e.ask(core.AskInput{Text: "before"})
			ended, kept := openStream(t, alice), openStream(t, bob)

			c.end(e, alice)
			q := e.ask(core.AskInput{Text: "after"})
			start := time.Now()
			for open := true; open; {
				select {
				case l, ok := <-ended:
					if open = ok; ok && strings.Contains(l, string(q.ID)) {
						t.Errorf("after the session ended the stream still said %q", l)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("the stream outlived its session by 5s")
				}
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("the stream ended %s after its session, want within about a second", took)
			}
			for {
				select {
				case l, ok := <-kept:
					if !ok {
						t.Fatal("another session's stream ended")
					}
					if strings.Contains(l, string(q.ID)) {
						return
					}
				case <-time.After(10 * time.Second):
					t.Fatal("another session's stream did not carry the new question")
				}
			}
		})
	}
}

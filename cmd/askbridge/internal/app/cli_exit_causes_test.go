package app_test

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

// TestCLIExitsUnreachableOnTooManyRequests: a 429 (a question with as
// many waits parked as the bridge holds, an address held after wrong
// tokens, a proxy's rate limit) says "not now", so every command exits
// 10, the code a script tries again on, whether the body is the API's or
// a proxy's, with or without Retry-After. Before, each exited 1, as for
// an error that trying again will not mend.
func TestCLIExitsUnreachableOnTooManyRequests(t *testing.T) {
	app.SetRetryPause(t, time.Millisecond)
	for _, c := range []struct {
		name, body, retryAfter string
		commands               [][]string
	}{
		{"the API's 429", `{"error":{"code":"forbidden","message":"too many wrong tokens from this address"}}`, "", clientCommands},
		{"a proxy's 429", "Too Many Requests", "", clientCommands},
		// answer and decline are not retried, so Retry-After costs
		// nothing here; ask and wait's first read retry a 429 that names
		// one, as they should.
		{"a 429 with Retry-After", `{"error":{"code":"forbidden","message":"try again in 2 seconds"}}`, "2",
			[][]string{{"answer", unknownID, "--text", "eu-west-1"}, {"decline", unknownID}}},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if c.retryAfter != "" {
				w.Header().Set("Retry-After", c.retryAfter)
			}
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, c.body)
		}))
		t.Cleanup(srv.Close)
		for _, args := range c.commands {
			code, out, errb := runAll(t.Context(), envAt(srv.URL, apptest.AgentA), "", args...)
			if code != app.ExitUnreachable || !strings.Contains(errb, "429") {
				t.Errorf("%s, %v: exit %d, stdout %q, stderr %q; want %d and the 429", c.name, args, code, out, errb, app.ExitUnreachable)
			}
		}
	}
}

// TestCLIExitsOneOnAWrongScheme: an ASKBRIDGE_URL whose scheme is not
// the bridge's (https:// at a bridge that speaks plain HTTP, http:// at
// one behind TLS) is a setting to fix, which trying again never mends:
// every command exits 1, naming the setting, not 10. Before, https://
// at a plain-HTTP bridge exited 10, so a script retried it for ever.
func TestCLIExitsOneOnAWrongScheme(t *testing.T) {
	app.SetRetryPause(t, time.Millisecond)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request reached the plain-HTTP server: %s %s", r.Method, r.URL)
	}))
	t.Cleanup(plain.Close)
	tls := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request reached the TLS server: %s %s", r.Method, r.URL)
	}))
	tls.Config.ErrorLog = log.New(io.Discard, "", 0) // each refused handshake is logged otherwise
	tls.StartTLS()
	t.Cleanup(tls.Close)
	for _, c := range []struct{ name, url, says string }{
		{"https:// at plain HTTP", "https://" + strings.TrimPrefix(plain.URL, "http://"), "ASKBRIDGE_URL"},
		// Go's TLS server (and nginx) answer a plain request 400, which
		// exits 1 as any refusal does; kept so that it stays so.
		{"http:// at TLS", "http://" + strings.TrimPrefix(tls.URL, "https://"), "HTTPS"},
	} {
		for _, args := range clientCommands {
			code, out, errb := runAll(t.Context(), envAt(c.url, apptest.AgentA), "", args...)
			if code != app.ExitError || !strings.Contains(errb, c.says) {
				t.Errorf("%s, %v: exit %d, stdout %q, stderr %q; want %d and %q", c.name, args, code, out, errb, app.ExitError, c.says)
			}
		}
	}
}

package mcp

import (
	"net/http/httptest"
	"testing"
)

// TestCrossOriginByHost: an Origin is the request's own when it names the
// Host the request was sent to, whatever the case of either and for an
// IPv6 literal too; another host, another port, an opaque origin ("null")
// or a scheme that is not the web's is another origin. No Origin is no
// browser, and passes.
func TestCrossOriginByHost(t *testing.T) {
	for _, c := range []struct {
		origin, host string
		cross        bool
	}{
		{"", "askbridge.example:8080", false},
		{"http://askbridge.example:8080", "askbridge.example:8080", false},
		{"https://AskBridge.Example", "askbridge.EXAMPLE", false},
		{"HTTP://askbridge.example:8080", "askbridge.example:8080", false},
		{"http://[::1]:8080", "[::1]:8080", false},
		{"http://[::1]:8081", "[::1]:8080", true},
		{"http://askbridge.example:8081", "askbridge.example:8080", true},
		{"http://evil.example:8080", "askbridge.example:8080", true},
		{"null", "askbridge.example:8080", true},
		{"file://", "askbridge.example:8080", true},
		{"chrome-extension://askbridge.example:8080", "askbridge.example:8080", true},
	} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Host = c.host
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if got := crossOrigin(r); got != c.cross {
			t.Errorf("Origin %q to Host %q: cross-origin %v, want %v", c.origin, c.host, got, c.cross)
		}
	}
}

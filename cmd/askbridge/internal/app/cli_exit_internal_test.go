package app

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
)

// TestCallExitOfALookup: a host that DNS says does not exist is a
// setting to fix (ASKBRIDGE_URL misspelt), which trying again never
// mends: exit 1, naming the setting. A lookup that could not be
// answered (a resolver that timed out or failed) is an outage, 10, as a
// refused connection is. Before, every lookup failure exited 10, so a
// script retried a typo for ever. The errors are built as net/http's
// are, so that no test asks a real resolver.
func TestCallExitOfALookup(t *testing.T) {
	dial := func(err error) error {
		return fmt.Errorf("askbridge: GET /v1/people: %w", &url.Error{Op: "Get", URL: "http://askbrigde.internal:8080/v1/people",
			Err: &net.OpError{Op: "dial", Net: "tcp", Err: err}})
	}
	for _, c := range []struct {
		name string
		err  error
		want int
		says string
	}{
		{"no such host", dial(&net.DNSError{Err: "no such host", Name: "askbrigde.internal", IsNotFound: true}), exitError, "ASKBRIDGE_URL"},
		{"a resolver that timed out", dial(&net.DNSError{Err: "i/o timeout", Name: "askbridge.internal", IsTimeout: true, IsTemporary: true}), exitUnreachable, ""},
		{"a resolver that failed", dial(&net.DNSError{Err: "server misbehaving", Name: "askbridge.internal", IsTemporary: true}), exitUnreachable, ""},
		{"a refused connection", dial(&net.OpError{Op: "connect", Err: syscall.ECONNREFUSED}), exitUnreachable, ""},
	} {
		var errb bytes.Buffer
		if got := callFailed(t.Context(), &errb, c.err); got != c.want || !strings.Contains(errb.String(), c.says) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", c.name, got, errb.String(), c.want, c.says)
		}
	}
}

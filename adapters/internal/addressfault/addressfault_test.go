package addressfault

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"testing"
)

// answered is a server's answer other than success, as the API client's
// *Error gives it (its Response method).
type answered struct {
	status        int
	code, message string
}

func (a *answered) Error() string { return a.message }
func (a *answered) Response() (int, string, string) {
	return a.status, a.code, a.message
}

// TestOf: each fault no retry mends is named, however wrapped; an outage,
// and a 400 that is the API's or any other server's, are none.
func TestOf(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("Get %q: %w", "http://x", err) }
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"unknown host", wrap(&net.OpError{Op: "dial", Err: &net.DNSError{Name: "askbrigde.internal", IsNotFound: true}}), `DNS knows no host "askbrigde.internal"`},
		{"https at plain HTTP", wrap(http.ErrSchemeMismatch), "it says https://, and the server there speaks plain HTTP"},
		{"https at no TLS", wrap(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}), "it says https://, and the server there does not speak TLS"},
		{"http at Go's TLS", wrap(&answered{status: 400, message: "Client sent an HTTP request to an HTTPS server."}), "it says http://, and the server there speaks HTTPS"},
		{"http at nginx's TLS", &answered{status: 400, message: "The plain HTTP request was sent to HTTPS port"}, "it says http://, and the server there speaks HTTPS"},
		{"a lookup that timed out", wrap(&net.DNSError{Name: "h", IsTimeout: true}), ""},
		{"the API's 400", &answered{status: 400, code: "invalid", message: "HTTP request to an HTTPS server"}, ""},
		{"another 400", &answered{status: 400, message: "bad request"}, ""},
		{"a 502 in the same words", &answered{status: 502, message: "HTTP request to an HTTPS server"}, ""},
		{"nil", nil, ""},
	} {
		if got := Of(c.err); got != c.want {
			t.Errorf("%s: Of(%v) = %q; want %q", c.name, c.err, got, c.want)
		}
	}
}

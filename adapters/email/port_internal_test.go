package email

import (
	"strconv"
	"strings"
	"testing"
)

// TestDefaultPorts: the port dialled, as every send's session dials it
// (Adapter.addr) and the client it builds (Adapter.client) names it, is
// README's: 587 unless a port is given, 465 with TLS "tls". Before, TLS
// "none" with no port dialled 25 (go-mail's port policy for plain text).
func TestDefaultPorts(t *testing.T) {
	for _, c := range []struct {
		mode string
		port int
		want int
	}{
		{"", 0, 587}, {TLSStartTLS, 0, 587}, {TLSNone, 0, 587}, {TLSImplicit, 0, 465},
		{TLSStartTLS, 25, 25}, {TLSNone, 2525, 2525}, {TLSImplicit, 2465, 2465},
	} {
		a, err := New(nil, Options{Host: "smtp.example.test", Port: c.port, TLS: c.mode, From: "askbridge@example.test",
			PublicURL: "https://bridge.example.test", Key: []byte("server key of the test, 32 bytes")})
		if err != nil {
			t.Fatal(err)
		}
		client, err := a.client(nil, a.helo)
		if err != nil {
			t.Fatal(err)
		}
		want := "smtp.example.test:" + strconv.Itoa(c.want)
		if a.addr != want || client.ServerAddr() != want {
			t.Errorf("TLS %q, port %d: dials %s (go-mail's %s), want %s", c.mode, c.port, a.addr, client.ServerAddr(), want)
		}
	}
}

// TestPort465IsImplicitTLS: port 465 speaks TLS from the first byte, so
// it is dialled so without TLS set, and refused at start with STARTTLS
// or plain text, saying what to set. Before, either was taken, and every
// send waited in plain text for a greeting the relay never sends (it
// waits for the TLS handshake) until the session's timeout, and was
// retried so until the outbox gave up.
func TestPort465IsImplicitTLS(t *testing.T) {
	o := Options{Host: "smtp.example.test", Port: 465, From: "askbridge@example.test",
		PublicURL: "https://bridge.example.test", Key: []byte("server key of the test, 32 bytes")}
	a, err := New(nil, o)
	if err != nil {
		t.Fatalf("port 465 without TLS set: %v", err)
	}
	if a.tls == nil || a.opts.TLS != TLSImplicit {
		t.Errorf("port 465 without TLS set dials with TLS %q, not from the first byte", a.opts.TLS)
	}
	for _, mode := range []string{TLSStartTLS, TLSNone} {
		o.TLS = mode
		_, err := New(nil, o)
		if err == nil || !strings.Contains(err.Error(), "465") || !strings.Contains(err.Error(), `"tls"`) {
			t.Errorf("port 465 with TLS %q: %v, want a refusal naming TLS \"tls\"", mode, err)
		}
	}
}

package email

import (
	"strconv"
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
		client, err := a.client(nil)
		if err != nil {
			t.Fatal(err)
		}
		want := "smtp.example.test:" + strconv.Itoa(c.want)
		if a.addr != want || client.ServerAddr() != want {
			t.Errorf("TLS %q, port %d: dials %s (go-mail's %s), want %s", c.mode, c.port, a.addr, client.ServerAddr(), want)
		}
	}
}

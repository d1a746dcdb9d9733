package email_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/adapters/email/emailfake"
	"github.com/askbridge/askbridge/core"
)

// TestAnIPv6RelayIsReached: a relay named by its IPv6 address, bare or
// in brackets, is dialled at that address and port, and its certificate
// checked for that address. Before, go-mail joined host and port with a
// colon ("::1:587"), which no dialler reads, so every mail to such a
// relay failed at the dial and was given up on (in brackets, as URLs
// write it, it was reached, and still is). The address here is
// 127.0.0.1 written as IPv6 (::ffff:127.0.0.1), which Go dials over
// IPv4, so the test needs no IPv6 on the machine.
func TestAnIPv6RelayIsReached(t *testing.T) {
	for _, c := range []struct{ host, tls string }{
		{"::ffff:127.0.0.1", email.TLSNone}, {"::ffff:127.0.0.1", email.TLSStartTLS}, {"[::ffff:127.0.0.1]", email.TLSStartTLS},
	} {
		t.Run(c.host+" "+c.tls, func(t *testing.T) {
			fake := emailfake.Start(t, emailfake.Options{})
			_, port, _ := strings.Cut(fake.Addr, ":")
			p, _ := strconv.Atoi(port)
			_, a, q := mailer(t, email.Options{Host: c.host, Port: p, TLS: c.tls, RootCAs: fake.Roots})
			if _, err := a.Post(t.Context(), q, core.MessageRef{Surface: core.SurfaceEmail, Room: alice, Delivery: "d1"}); err != nil {
				t.Fatalf("Post through the relay at %s: %v", c.host, err)
			}
			if n := len(fake.Mailbox(alice)); n != 1 {
				t.Fatalf("alice has %d messages, want 1", n)
			}
		})
	}
}

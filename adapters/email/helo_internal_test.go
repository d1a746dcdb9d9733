package email

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/email/emailfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestEHLONamesTheMachineOrItsAddress: the EHLO gives the configured
// name, else the machine's when it is fully qualified, else the address
// of the connection's own end as a literal (RFC 5321, 4.1.4). Before,
// it gave the machine's name whatever it was: "localhost", or a bare
// container or laptop name, which relays that check the EHLO refuse, so
// that every mail failed; and there was no setting to give another.
// A machine named by an address ("10.0.0.5") gave that address bare,
// which RFC 5321 (4.1.3) takes only in brackets.
func TestEHLONamesTheMachineOrItsAddress(t *testing.T) {
	machine := hostname
	t.Cleanup(func() { hostname = machine })
	for _, c := range []struct{ machine, configured, want string }{
		{"bridge-1.example.test", "", "bridge-1.example.test"},
		{"3f2a9c1d7b6e", "", "[127.0.0.1]"}, // a container's name
		{"localhost", "", "[127.0.0.1]"},
		{"localhost.localdomain", "", "[127.0.0.1]"},
		{"10.0.0.5", "", "[127.0.0.1]"},  // named by an address: no domain name
		{"10.0.0.5.", "", "[127.0.0.1]"}, // the same, written absolute
		{"3f2a9c1d7b6e", "mail-out.example.test", "mail-out.example.test"},
		{"3f2a9c1d7b6e", "[192.0.2.7]", "[192.0.2.7]"},
	} {
		hostname = func() (string, error) { return c.machine, nil }
		fake := emailfake.Start(t, emailfake.Options{})
		host, port, _ := strings.Cut(fake.Addr, ":")
		p, _ := strconv.Atoi(port)
		svc, _ := coretest.Open(t, coretest.Options{})
		a, err := New(svc, Options{Host: host, Port: p, TLS: TLSNone, HELO: c.configured, From: "askbridge@bridge.example.test",
			PublicURL: "https://bridge.example.test", Key: []byte("server key of the test, 32 bytes"), Log: zerolog.Nop()})
		if err != nil {
			t.Fatal(err)
		}
		q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Text: "Which region?", Agent: "deploy-bot",
			RunID: "run-1", Reversibility: core.HardToReverse})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Post(t.Context(), q, core.MessageRef{Surface: core.SurfaceEmail, Room: "alice@example.test", Delivery: "d1"}); err != nil {
			t.Fatal(err)
		}
		if got := fake.Mailbox("alice@example.test")[0].Helo; got != c.want {
			t.Errorf("machine %q, HELO %q: the EHLO gave %q, want %q", c.machine, c.configured, got, c.want)
		}
	}
}

// TestAnEHLONameThatIsNoneIsRefused: a configured EHLO name that is not
// a domain name or an address literal is refused at start, naming it;
// one with a line break would otherwise put a command of its own into
// the session.
func TestAnEHLONameThatIsNoneIsRefused(t *testing.T) {
	for _, name := range []string{"mail out", "mail.example.test\r\nRSET", "[300.1.2.3]", "[2001:db8::1]", "-mail.example.test", "mail_out.example.test",
		"10.0.0.5", "10.0.0.5.", "mail.example.123"} {
		_, err := New(nil, Options{Host: "smtp.example.test", HELO: name, From: "askbridge@example.test",
			PublicURL: "https://bridge.example.test", Key: []byte("server key of the test, 32 bytes")})
		if err == nil || !strings.Contains(err.Error(), "EHLO") {
			t.Errorf("HELO %q: %v, want a refusal", name, err)
		}
	}
	for _, name := range []string{"mail.example.test", "[192.0.2.7]", "[IPv6:2001:db8::7]"} {
		if _, err := New(nil, Options{Host: "smtp.example.test", HELO: name, From: "askbridge@example.test",
			PublicURL: "https://bridge.example.test", Key: []byte("server key of the test, 32 bytes")}); err != nil {
			t.Errorf("HELO %q: %v", name, err)
		}
	}
}

// TestAnEHLONameWrittenAsABareAddressSaysWhatToWrite: EMAIL_SMTP_HELO
// set to an address without its brackets is refused, saying the literal
// to write; before, "10.0.0.5" read as a domain name and each EHLO gave
// it bare, which RFC 5321 (4.1.3) does not allow.
func TestAnEHLONameWrittenAsABareAddressSaysWhatToWrite(t *testing.T) {
	for name, want := range map[string]string{"10.0.0.5": `"[10.0.0.5]"`, "2001:db8::7": `"[IPv6:2001:db8::7]"`, "[2001:db8::7]": `"[IPv6:2001:db8::7]"`} {
		if err := CheckHELO(name); err == nil || !strings.Contains(err.Error(), "write "+want) {
			t.Errorf("HELO %q: %v, want a refusal that says to write %s", name, err, want)
		}
	}
}

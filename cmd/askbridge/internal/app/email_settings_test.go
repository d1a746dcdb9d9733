package app_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
)

// TestEmailPort465IsTLSFromTheFirstByte: port 465 speaks TLS from the
// first byte (RFC 8314). Before, EMAIL_SMTP_TLS defaulted to starttls
// whatever the port, so EMAIL_SMTP_PORT=465 alone was refused by the
// email door with an error naming EMAIL_SMTP_HOST; now 465 alone is
// implicit TLS, and 465 with starttls or none is refused naming the
// port. A bad EMAIL_SMTP_HELO is refused naming it.
func TestEmailPort465IsTLSFromTheFirstByte(t *testing.T) {
	base := func(kv ...string) func(string) string {
		env := map[string]string{"EMAIL_SMTP_HOST": "smtp.example.com", "EMAIL_FROM": "askbridge@example.com",
			"ASKBRIDGE_PUBLIC_URL": "https://bridge.example.com"}
		for i := 0; i+1 < len(kv); i += 2 {
			env[kv[i]] = kv[i+1]
		}
		return func(k string) string { return env[k] }
	}
	for _, c := range []struct {
		port, tls, want string
	}{
		{"465", "", "tls"},
		{"465", "tls", "tls"},
		{"", "", "starttls"},
		{"587", "", "starttls"},
		{"25", "none", "none"},
	} {
		s, err := app.LoadSettings(base("EMAIL_SMTP_PORT", c.port, "EMAIL_SMTP_TLS", c.tls))
		if err != nil {
			t.Errorf("port %q, TLS %q: %v", c.port, c.tls, err)
			continue
		}
		if s.Email.TLS != c.want {
			t.Errorf("port %q, TLS %q: TLS %q; want %q", c.port, c.tls, s.Email.TLS, c.want)
		}
	}
	for _, tls := range []string{"starttls", "none"} {
		_, err := app.LoadSettings(base("EMAIL_SMTP_PORT", "465", "EMAIL_SMTP_TLS", tls))
		if err == nil || !strings.HasPrefix(err.Error(), "EMAIL_SMTP_PORT: 465") || !strings.Contains(err.Error(), "EMAIL_SMTP_TLS=tls") {
			t.Errorf("port 465 with TLS %s: %v; want a refusal naming the port and the fix", tls, err)
		}
	}
	if _, err := app.LoadSettings(base("EMAIL_SMTP_HELO", "bridge host\r\nRCPT TO:<x@y>")); err == nil || !strings.HasPrefix(err.Error(), "EMAIL_SMTP_HELO:") {
		t.Errorf("a HELO name with a line break: %v; want a refusal naming EMAIL_SMTP_HELO", err)
	}
	if s, err := app.LoadSettings(base("EMAIL_SMTP_HELO", "bridge.example.com")); err != nil || s.Email.HELO != "bridge.example.com" {
		t.Errorf("EMAIL_SMTP_HELO=bridge.example.com: %q, %v", s.Email.HELO, err)
	}
}

// TestEmailFromWithNoASCIIDomainIsRefusedNamingIt: a sender whose domain
// IDNA refuses (so its Message-IDs could not be written) is refused where
// the settings are read, naming EMAIL_FROM; an internationalised domain
// IDNA takes is accepted. Before, the settings took it and the email
// door refused it at start naming EMAIL_SMTP_HOST.
func TestEmailFromWithNoASCIIDomainIsRefusedNamingIt(t *testing.T) {
	env := func(from string) func(string) string {
		m := map[string]string{"EMAIL_SMTP_HOST": "smtp.example.com", "EMAIL_FROM": from, "ASKBRIDGE_PUBLIC_URL": "https://bridge.example.com"}
		return func(k string) string { return m[k] }
	}
	if _, err := app.LoadSettings(env("askbridge@-bär.example")); err == nil || !strings.HasPrefix(err.Error(), "EMAIL_FROM:") {
		t.Errorf("EMAIL_FROM with a domain IDNA refuses: %v; want a refusal naming EMAIL_FROM", err)
	}
	if _, err := app.LoadSettings(env("askbridge@bücher.example")); err != nil {
		t.Errorf("EMAIL_FROM with an internationalised domain: %v; want it taken", err)
	}
}

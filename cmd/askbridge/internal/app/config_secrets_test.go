package app_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
)

// TestFileSecretsAreTrimmed: a secret written in the file as a block
// scalar ("token: |", the secret on the next line) ends in a newline,
// and one quoted with spaces around it has them; each is read trimmed,
// as the same secret read from the environment is. Before, the token
// kept its newline and could never match the one a client presents
// (the API trims the bearer it is sent), and the webhook and OIDC
// secrets signed and authenticated with bytes their other end never has.
func TestFileSecretsAreTrimmed(t *testing.T) {
	const yaml = `webhooks:
  allow: ['https://hooks.example.test/ab/']
  secret: |
    hooks-secret-0123456789
routes:
  a:
    deciders: {api: ['*']}
    callback_url: 'https://hooks.example.test/ab/a'
    webhook_secret: "  route-secret-0123456789  "
tokens:
  - name: ci
    role: agent
    token: |+
      ci-token-0123456789abcdef

    webhook_secret: >
      token-hook-0123456789
oidc:
  issuer: https://login.example.com
  client_id: askbridge
  client_secret: |
    oidc-secret-0123456789
  redirect_url: https://askbridge.example.com/oidc/callback
  roles: {sre: operator}
`
	f, err := app.ParseFile([]byte(yaml), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key  string
		got  app.Secret
		want string
	}{
		{"webhooks.secret", f.Webhooks.Secret, "hooks-secret-0123456789"},
		{"routes.a.webhook_secret", f.Routes["a"].WebhookSecret, "route-secret-0123456789"},
		{"tokens[0].token", f.Tokens[0].Token, "ci-token-0123456789abcdef"},
		{"tokens[0].webhook_secret", f.Tokens[0].WebhookSecret, "token-hook-0123456789"},
		{"oidc.client_secret", f.OIDC.ClientSecret, "oidc-secret-0123456789"},
	} {
		if c.got.Reveal() != c.want {
			t.Errorf("%s read as %q, want %q", c.key, c.got.Reveal(), c.want)
		}
	}

	// A secret of blanks alone is no secret: it is refused as a missing one.
	if _, err := app.ParseFile([]byte("tokens: [{name: ci, role: agent, token: \"   \"}]"), func(string) string { return "" }); err == nil ||
		!strings.Contains(err.Error(), "tokens[0]: token or token_env is required") {
		t.Errorf("a token of blanks: %v; want it refused as missing", err)
	}
}

// TestABlockScalarTokenSignsIn: the program started with a token written
// as a block scalar takes that token from a client. Before, every ask
// with it was refused as unauthorised.
func TestABlockScalarTokenSignsIn(t *testing.T) {
	yaml := strings.Replace(reloadYAML("ops-one", ""), "  - {name: agent, role: agent, token: "+reloadAgent+"}\n",
		"  - name: agent\n    role: agent\n    token: |\n      "+reloadAgent+"\n", 1)
	if !strings.Contains(yaml, "token: |\n") {
		t.Fatalf("the file has no block scalar token:\n%s", yaml)
	}
	r := startBehindLink(t, nil, yaml)
	askOn(t, r.m.URL, "deploy") // fails the test when the token is refused
}

package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
)

// TestPolicyTestNeedsNoSecrets: "policy test" tries a rule from the
// configuration alone: the secrets its tokens, webhooks and sign-in name
// by variable need not be set. serve still refuses the file without
// them. Before, policy test refused too, so rules could be tried only
// where the production secrets were.
func TestPolicyTestNeedsNoSecrets(t *testing.T) {
	raw := `routes:
  default:
    deciders: {api: ["*"]}
    rules:
      - {name: bash, when: 'tool == "Bash"', decide: allow}
tokens:
  - {name: build-agent, role: agent, token_env: BUILD_AGENT_TOKEN}
  - {name: ops, role: operator, token_env: OPS_TOKEN}
webhooks:
  secret_env: WEBHOOK_SECRET
  allow: ["https://hooks.example.com/"]
`
	cfg := filepath.Join(t.TempDir(), "askbridge.yaml")
	if err := os.WriteFile(cfg, []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	noSecrets := func(string) string { return "" }
	ask := `{"kind":"approval","question":"x","reversibility":"reversible","tool":"Bash","arguments":{"command":"ls"}}`
	code, out, errb := runAll(t.Context(), noSecrets, ask, "policy", "test", "--config", cfg)
	if code != 0 || !strings.Contains(out, `"bash"`) {
		t.Errorf("policy test without the secrets: exit %d, stdout %q, stderr %q; want rule bash's verdict", code, out, errb)
	}
	if _, err := app.ParseFile([]byte(raw), noSecrets); err == nil || !strings.Contains(err.Error(), "BUILD_AGENT_TOKEN is empty") {
		t.Errorf("the file read as serve reads it, without the secrets: %v, want BUILD_AGENT_TOKEN refused", err)
	}
}

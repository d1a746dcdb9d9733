package app_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
)

// TestAdminTokenNotPrintedWhenTheConfigurationNamesTokens: a deployment
// whose configuration names the API's tokens does not print the admin
// token its first start makes, only where it is kept: its output goes to
// a log many can read (a pod restarted on an empty volume would print a
// new one each time), where the token would let any reader in as admin.
// The zero set-up start still prints it (TestFirstStart...).
func TestAdminTokenNotPrintedWhenTheConfigurationNamesTokens(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "askbridge.yaml")
	if err := os.WriteFile(cfg, []byte("tokens:\n  - {name: ops, role: operator, token: ops-token-0123456789}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ASKBRIDGE_ADDR": "127.0.0.1:0", "ASKBRIDGE_DATA_DIR": filepath.Join(dir, "data"), "ASKBRIDGE_CONFIG": cfg}
	s, err := app.LoadSettings(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	m := &app.Main{Settings: s, Stdout: &stdout, Log: zerolog.Nop()}
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	out := stdout.String()
	if m.AdminToken == "" || strings.Contains(out, m.AdminToken) || !strings.Contains(out, filepath.Join(dir, "data", "admin.token")) {
		t.Fatalf("printed %q; want where the admin token is kept, not the token", out)
	}
}

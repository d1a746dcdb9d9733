package app_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
)

// TestCLIKeepsTheAdminTokenLocal: with no ASKBRIDGE_TOKEN, the CLI reads
// the local admin token only for a server on this machine; for one that
// ASKBRIDGE_URL puts elsewhere it fails, saying to set the token, and
// sends nothing. Before, it sent the local admin token to whatever host
// ASKBRIDGE_URL named.
func TestCLIKeepsTheAdminTokenLocal(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "admin.token"), []byte("local-admin-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		return map[string]string{"ASKBRIDGE_URL": "http://askbridge.example.invalid:8080", "ASKBRIDGE_DATA_DIR": dir}[k]
	}
	var out, errb bytes.Buffer
	if code := app.Run(t.Context(), []string{"questions"}, env, nil, &out, &errb); code == 0 || !strings.Contains(errb.String(), "no ASKBRIDGE_TOKEN") {
		t.Fatalf("exit %d, stderr %q; want a refusal naming ASKBRIDGE_TOKEN", code, errb.String())
	}
	if strings.Contains(errb.String(), "local-admin-token") {
		t.Errorf("the refusal shows the token: %q", errb.String())
	}
}

// TestCLIAskPrintsItsKeyWhenItGivesUp: an ask the CLI gives up on, not
// knowing whether it was parked, prints how to run it again so that it
// gets the question rather than asking people twice.
func TestCLIAskPrintsItsKeyWhenItGivesUp(t *testing.T) {
	env := func(k string) string {
		return map[string]string{"ASKBRIDGE_URL": "http://127.0.0.1:1", "ASKBRIDGE_TOKEN": "agent-token-0123456789"}[k]
	}
	ctx, cancel := context.WithTimeout(t.Context(), 400*time.Millisecond)
	defer cancel()
	var out, errb bytes.Buffer
	code := app.Run(ctx, []string{"ask", "--reversibility", "reversible", "--question", "Proceed?", "--run", "run-7"}, env, nil, &out, &errb)
	if code == 0 || !regexp.MustCompile(`--idempotency-key [0-9a-f]{32} --run run-7`).MatchString(errb.String()) {
		t.Fatalf("exit %d, stderr %q; want the key and run to ask again with", code, errb.String())
	}
}

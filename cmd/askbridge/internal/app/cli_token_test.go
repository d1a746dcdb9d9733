package app_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
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

// TestCLILocalTokenSkipsTheProxy: with the local admin token, the CLI
// talks to the server on this machine directly, never through an HTTP
// proxy, even when ASKBRIDGE_ADDR is a wildcard (the image's 0.0.0.0:8080),
// which Go's proxy rules do not count as loopback. Before, the proxy got
// the request and the admin token in its Authorization header. The CLI
// runs as its own process, as Go reads the proxy variables once.
func TestCLILocalTokenSkipsTheProxy(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		if strings.Contains(r.Header.Get("Authorization"), m.AdminToken) {
			t.Errorf("the proxy got the admin token: %s %s", r.Method, r.URL)
		}
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer proxy.Close()
	_, port, err := net.SplitHostPort(strings.TrimPrefix(m.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{"0.0.0.0:" + port, ":" + port} {
		for _, args := range [][]string{{"questions"}, {"events"}} {
			cmd := exec.Command(os.Args[0], args...)
			for _, kv := range os.Environ() {
				if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "ASKBRIDGE_") && !strings.HasSuffix(strings.ToLower(k), "_proxy") {
					cmd.Env = append(cmd.Env, kv)
				}
			}
			cmd.Env = append(cmd.Env, apptest.AsProgram+"=1", "ASKBRIDGE_ADDR="+addr, "ASKBRIDGE_DATA_DIR="+m.Settings.DataDir,
				"HTTP_PROXY="+proxy.URL, "http_proxy="+proxy.URL, "HTTPS_PROXY="+proxy.URL, "ALL_PROXY="+proxy.URL)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("ASKBRIDGE_ADDR=%s askbridge %v: %v\n%s", addr, args, err, out)
			}
		}
	}
	if n := proxied.Load(); n > 0 {
		t.Errorf("the proxy got %d requests; want none", n)
	}
}

package app_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
)

// TestConfigCheckRefusesWhatServeRefuses: `askbridge config check`
// refuses a file serve would refuse at start, in serve's words, and
// changes nothing; it passes a good one and says what it holds.
func TestConfigCheckRefusesWhatServeRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.yaml", "routes:\n  deploy:\n    deciders:\n      api: [\"*\"]\npolicies:\n  retention: 30m\n")
	good := write("good.yaml", "routes:\n  deploy:\n    deciders:\n      api: [\"*\"]\npeople:\n  alice:\n    slack: U1\n  bob:\n    slack: U2\n")
	envWith := func(config string) func(string) string {
		return func(k string) string {
			switch k {
			case "ASKBRIDGE_CONFIG":
				return config
			case "ASKBRIDGE_DATA_DIR":
				return dir
			}
			return ""
		}
	}
	var out, errb bytes.Buffer
	if code := app.Run(t.Context(), []string{"serve"}, envWith(bad), nil, &out, &errb); code != 2 {
		t.Fatalf("serve with the bad file: exit %d, %s", code, errb.String())
	}
	served := strings.TrimSpace(errb.String())

	for _, args := range [][]string{{"config", "check"}, {"config", "check", "--config", bad}} {
		out.Reset()
		errb.Reset()
		env := envWith(bad)
		if len(args) > 2 {
			env = envWith(good) // --config names the file, over the environment's
		}
		if code := app.Run(t.Context(), args, env, nil, &out, &errb); code != app.ExitError || strings.TrimSpace(errb.String()) != served || out.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and serve's words %q", args, code, out.String(), errb.String(), app.ExitError, served)
		}
	}
	out.Reset()
	errb.Reset()
	if code := app.Run(t.Context(), []string{"config", "check"}, envWith(good), nil, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), good+": 1 route, 2 people, 0 groups, 0 policy rules, 0 tokens") {
		t.Errorf("the good file: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 2 {
		t.Errorf("the check left %d entries in the data directory (%v), want only the two files", len(entries), err)
	}
	errb.Reset()
	if code := app.Run(t.Context(), []string{"config"}, envWith(good), nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "usage: askbridge config check") {
		t.Errorf("config alone: exit %d, %q", code, errb.String())
	}
}

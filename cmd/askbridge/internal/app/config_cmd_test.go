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
	if code := app.Run(t.Context(), []string{"serve"}, envWith(bad), nil, &out, &errb); code != app.ExitConfig {
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

// TestConfigCheckRefusesASurfaceNotRunning: config check refuses a
// file that sends to a chat surface the environment does not turn on (a
// route's room, a person's direct messages), in serve's words, as serve
// refuses it at start; with the surface's variables set it passes. Before,
// the check said "ok" to a file serve would not start with.
func TestConfigCheckRefusesASurfaceNotRunning(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, yaml, want string }{
		{"a room on Slack", "routes:\n  deploy:\n    deciders:\n      api: [\"*\"]\n    rooms: [{surface: slack, id: C0123}]\n",
			"routes.deploy.rooms[0]: slack is not running here (SLACK_BOT_TOKEN is not set)"},
		{"direct messages on Slack", "routes:\n  deploy:\n    deciders:\n      api: [\"*\"]\npeople:\n  alice:\n    slack: U1\n    dm: true\n",
			"people.alice.dm: their direct messages go to slack, and slack is not running here"},
	} {
		file := filepath.Join(dir, "askbridge.yaml")
		if err := os.WriteFile(file, []byte(c.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		vars := map[string]string{"ASKBRIDGE_CONFIG": file, "ASKBRIDGE_DATA_DIR": t.TempDir(), "ASKBRIDGE_ADDR": "127.0.0.1:0"}
		env := func(k string) string { return vars[k] }

		var out, errb bytes.Buffer
		// ExitConfig, as for a setting refused before the start: the
		// systemd unit restarts a failed start but not that.
		if code := app.Run(t.Context(), []string{"serve"}, env, nil, &out, &errb); code != app.ExitConfig || !strings.Contains(errb.String(), c.want) {
			t.Fatalf("%s: serve: exit %d, %s; want it refused with exit %d, saying %q", c.name, code, errb.String(), app.ExitConfig, c.want)
		}
		served := errb.String()
		out.Reset()
		errb.Reset()
		code := app.Run(t.Context(), []string{"config", "check"}, env, nil, &out, &errb)
		said := strings.TrimSpace(strings.TrimPrefix(errb.String(), "askbridge: "))
		if code != app.ExitError || out.Len() != 0 || !strings.HasPrefix(said, file+": "+c.want) || !strings.Contains(served, said) {
			t.Errorf("%s: config check: exit %d, stdout %q, stderr %q; want exit %d and serve's refusal %q", c.name, code, out.String(), errb.String(), app.ExitError, served)
		}

		vars["SLACK_BOT_TOKEN"], vars["SLACK_SIGNING_SECRET"] = "xoxb-1-2-abcdefabcdef", "8f742231b10e8888abcd99yyyzzz85a5"
		out.Reset()
		errb.Reset()
		if code := app.Run(t.Context(), []string{"config", "check"}, env, nil, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "ok:") {
			t.Errorf("%s: config check with Slack turned on: exit %d, stdout %q, stderr %q; want ok", c.name, code, out.String(), errb.String())
		}
	}
}

// TestConfigCheckExitsNonZeroWhenItCannotPrint: config check's "ok:" is
// what a deploy script reads; one that could not print it has failed.
// Before, audit and config were run outside the stdout check the client
// commands have, and a failed write exited 0.
func TestConfigCheckExitsNonZeroWhenItCannotPrint(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "askbridge.yaml")
	if err := os.WriteFile(file, []byte("routes:\n  deploy:\n    deciders:\n      api: [\"*\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		return map[string]string{"ASKBRIDGE_CONFIG": file, "ASKBRIDGE_DATA_DIR": dir}[k]
	}
	var errb strings.Builder
	if code := app.Run(t.Context(), []string{"config", "check"}, env, nil, brokenWriter{}, &errb); code != app.ExitError || !strings.Contains(errb.String(), "no space left") {
		t.Errorf("config check to a broken stdout: exit %d, stderr %q; want %d and why", code, errb.String(), app.ExitError)
	}
}

package app_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

// TestBadNameFileStopsOnlyTheServersCommands: a setting's NAME_FILE that
// cannot be read stops the commands that run on the server's settings
// (config check, as serve) at start, naming it; a client's command is
// not stopped by a server's broken setting (readEnv), so version still
// prints. Before, every command stopped at start, a hook too, before it
// could give its host the fallback. The program runs as its own process,
// as NAME_FILE is read in Exit.
func TestBadNameFileStopsOnlyTheServersCommands(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "discord-token")
	run := func(args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(os.Args[0], args...)
		for _, kv := range os.Environ() {
			if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "ASKBRIDGE_") && !strings.HasPrefix(k, "DISCORD_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, apptest.AsProgram+"=1", "ASKBRIDGE_DATA_DIR="+t.TempDir(), "DISCORD_BOT_TOKEN_FILE="+missing)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("askbridge %v: %v", args, err)
		}
		return cmd.ProcessState.ExitCode(), out.String(), errb.String()
	}
	if code, out, errb := run("config", "check"); code != 2 || !strings.Contains(errb, "DISCORD_BOT_TOKEN_FILE: open "+missing) {
		t.Errorf("config check: exit %d, stdout %q, stderr %q; want exit 2 naming DISCORD_BOT_TOKEN_FILE", code, out, errb)
	}
	if code, out, errb := run("version"); code != 0 || !strings.HasPrefix(out, "askbridge ") {
		t.Errorf("version: exit %d, stdout %q, stderr %q; want the version printed", code, out, errb)
	}
}

package deploy_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSystemdRestartsUntilItRuns: the unit starts serve again for as long
// as it exits 1, which is how serve says it could not start (a Redis not
// reached yet), and never for exit 78, how it refuses a setting, which no
// restart fixes; a panic (Go exits 2) is restarted. Before, systemd's default start limit (five starts in
// ten seconds) left askbridge down for good after a Redis that came up
// some seconds late, and a bad setting was retried every 2 s.
func TestSystemdRestartsUntilItRuns(t *testing.T) {
	unit, err := os.ReadFile("systemd/askbridge.service")
	if err != nil {
		t.Fatal(err)
	}
	settings := unitSettings(string(unit))
	if got := settings["StartLimitIntervalSec"]; !slices.Equal(got, []string{"0"}) {
		t.Errorf("StartLimitIntervalSec=%q; want 0, so that the restarts never stop", got)
	}
	if got := settings["Restart"]; !slices.Equal(got, []string{"on-failure"}) {
		t.Errorf("Restart=%q; want on-failure", got)
	}
	var prevented []string
	for _, v := range settings["RestartPreventExitStatus"] {
		prevented = append(prevented, strings.Fields(v)...)
	}
	if slices.Contains(prevented, "2") {
		t.Errorf("RestartPreventExitStatus=%q names 2, which Go exits with on a panic: a crashed serve would stay down", prevented)
	}

	bin := filepath.Join(t.TempDir(), "askbridge")
	build := exec.Command("go", "build", "-o", bin, "./cmd/askbridge")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nothing := ln.Addr().String()
	ln.Close() // no Redis there
	for _, c := range []struct {
		name    string
		env     []string
		restart bool
	}{
		{"Redis not reached", []string{"REDIS_URL=redis://" + nothing}, true},
		{"a setting refused", []string{"ASKBRIDGE_LOG_LEVEL=loudest"}, false},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		serve := exec.CommandContext(ctx, bin, "serve")
		serve.Env = append([]string{"PATH=" + os.Getenv("PATH"), "ASKBRIDGE_DATA_DIR=" + t.TempDir(), "ASKBRIDGE_ADDR=127.0.0.1:0"}, c.env...)
		out, _ := serve.CombinedOutput()
		timedOut := ctx.Err() != nil
		cancel()
		code := serve.ProcessState.ExitCode()
		if timedOut || code <= 0 {
			// Killed, it exits -1, which no RestartPreventExitStatus
			// names: a serve that never gave up would pass as restarted.
			t.Errorf("%s: serve exited %d (timed out: %v); want it to give up, with a code of its own\n%s", c.name, code, timedOut, out)
			continue
		}
		if restarted := !slices.Contains(prevented, strconv.Itoa(code)); restarted != c.restart {
			t.Errorf("%s: serve exits %d, which the unit restarts: %v; want %v (RestartPreventExitStatus=%q)\n%s",
				c.name, code, restarted, c.restart, prevented, out)
		}
	}
}

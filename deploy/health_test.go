package deploy_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/types"
)

// slowestBoot is the longest a serve that comes up may take before it
// listens (its listener opens once the store has answered): through
// Sentinel, go-redis dials up to seven times (store/redis's
// failoverRetries and one) with its 5 s dial timeout before the boot
// gives up.
const slowestBoot = 7 * 5 * time.Second

// healthcheckBound is askbridge healthcheck's own --timeout by default:
// under the engine's timeout, the command says why it failed.
const healthcheckBound = 3 * time.Second

// imageHealth is the Dockerfile's HEALTHCHECK: its flags and its command.
type imageHealth struct {
	flags map[string]string
	argv  []string
}

// dockerfileHealth reads deploy/Dockerfile's one HEALTHCHECK, its lines
// continued by a backslash joined.
func dockerfileHealth(t *testing.T) imageHealth {
	t.Helper()
	raw, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.ReplaceAll(string(raw), "\\\n", " ")
	var found []string
	for _, line := range strings.Split(joined, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "HEALTHCHECK" {
			found = append(found, strings.TrimSpace(line))
		}
	}
	if len(found) != 1 {
		t.Fatalf("the Dockerfile has %d HEALTHCHECK lines; want one", len(found))
	}
	flags, cmd, ok := strings.Cut(strings.TrimPrefix(found[0], "HEALTHCHECK"), " CMD ")
	if !ok {
		t.Fatalf("HEALTHCHECK without CMD: %q", found[0])
	}
	h := imageHealth{flags: map[string]string{}}
	for _, f := range strings.Fields(flags) {
		k, v, _ := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		h.flags[k] = v
	}
	if err := json.Unmarshal([]byte(cmd), &h.argv); err != nil {
		t.Fatalf("HEALTHCHECK CMD %q is not in exec form (no shell in the image): %v", cmd, err)
	}
	return h
}

func (h imageHealth) duration(t *testing.T, flag string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(h.flags[flag])
	if err != nil {
		t.Fatalf("HEALTHCHECK --%s=%q: %v", flag, h.flags[flag], err)
	}
	return d
}

// TestHealthChecksAskLiveness: the image's HEALTHCHECK, and compose's
// copy of it, ask whether serve serves (healthcheck --live, /healthz),
// not whether it reaches Redis (/readyz): Docker has one health, which
// Swarm kills containers by, and a Redis failing over must not have every
// replica killed. Their start period outlasts the slowest boot that comes
// up, plus a probe, so a boot waiting on Redis is not counted as failing;
// the engine's timeout outlasts the command's own. Before, both asked
// /readyz, with a start period (10 s) shorter than the first probe (15 s).
func TestHealthChecksAskLiveness(t *testing.T) {
	h := dockerfileHealth(t)
	want := []string{"/usr/local/bin/askbridge", "healthcheck", "--live"}
	if !slices.Equal(h.argv, want) {
		t.Errorf("HEALTHCHECK runs %q; want %q", h.argv, want)
	}
	interval, timeout, start := h.duration(t, "interval"), h.duration(t, "timeout"), h.duration(t, "start-period")
	if start < slowestBoot+interval {
		t.Errorf("HEALTHCHECK --start-period=%s; want at least the slowest boot (%s) and a probe (%s)", start, slowestBoot, interval)
	}
	if timeout <= healthcheckBound {
		t.Errorf("HEALTHCHECK --timeout=%s; want more than healthcheck's own %s, so it says why it failed", timeout, healthcheckBound)
	}

	hc := loadCompose(t).Services["askbridge"].HealthCheck
	if hc == nil {
		t.Fatal("compose's askbridge has no health check")
	}
	if got := hc.Test; len(got) == 0 || got[0] != "CMD" || !slices.Equal(got[1:], want) {
		t.Errorf("compose's askbridge health check runs %q; want CMD %q, as the image", got, want)
	}
	for _, c := range []struct {
		name string
		got  *types.Duration
		want time.Duration
	}{{"interval", hc.Interval, interval}, {"timeout", hc.Timeout, timeout}, {"start_period", hc.StartPeriod, start}} {
		if c.got == nil || time.Duration(*c.got) != c.want {
			t.Errorf("compose's askbridge health check %s %v; want the image's %s", c.name, c.got, c.want)
		}
	}
	if hc.Retries == nil || h.flags["retries"] == "" || *hc.Retries != mustUint(t, h.flags["retries"]) {
		t.Errorf("compose's askbridge health check retries %v; want the image's %s", hc.Retries, h.flags["retries"])
	}
}

func mustUint(t *testing.T, s string) uint64 {
	t.Helper()
	var n uint64
	if err := json.Unmarshal([]byte(s), &n); err != nil {
		t.Fatalf("%q is not a count: %v", s, err)
	}
	return n
}

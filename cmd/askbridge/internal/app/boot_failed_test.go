package app_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
)

// TestFailedStartsDoNotHideTheDowntime: starts that fail after Boot (the
// port taken, a platform refusing its token), as under systemd's
// Restart=on-failure every few seconds, leave the heartbeat as it was, so
// the start that finally serves sees the whole downtime and re-notifies.
// Before, each failed start wrote a fresh beat, and after twelve minutes
// of nothing served (the threshold is five) no one was re-notified.
func TestFailedStartsDoNotHideTheDowntime(t *testing.T) {
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	start := func(addr string) (*app.Main, *apptest.SyncBuffer, error) {
		var out apptest.SyncBuffer
		m := &app.Main{Settings: app.Settings{DataDir: dir, Addr: addr}, Clock: clock}
		m.Settings.File.Tokens = []app.TokenFile{{Name: "agent-a", Role: "agent", Token: apptest.AgentA}}
		m.Log = zerolog.New(&out).Level(zerolog.InfoLevel)
		m.Loops = loops.Intervals{Tick: 20 * time.Millisecond, Remind: 20 * time.Millisecond}
		err := m.Run(t.Context())
		return m, &out, err
	}
	m, _, err := start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.New(m.URL, apptest.AgentA).Ask(t.Context(), client.AskRequest{Kind: core.KindClarification,
		Question: "Ship it?", Reversibility: core.HardToReverse, RunID: "run-1", Timeout: client.Duration(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	m.Close()

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for range 6 {
		clock.Advance(2 * time.Minute)
		if _, _, err := start(busy.Addr().String()); err == nil || !strings.Contains(err.Error(), "ASKBRIDGE_ADDR") {
			t.Fatalf("a start on a taken port: %v", err)
		}
	}
	m2, out, err := start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if !strings.Contains(out.String(), "was away longer than the downtime threshold") {
		t.Fatalf("after twelve minutes of failed starts, with a question open, no downtime was seen; the log:\n%s", out.String())
	}
}

package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestZerologHandler: the MCP door's slog records reach the program's
// zerolog log at the nearest level, their attributes as fields (a
// group's prefixed, "err" as the program's error field), and what the
// log's level leaves out is not even built.
func TestZerologHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(zerologHandler{log: zerolog.New(&buf).Level(zerolog.InfoLevel).With().Str("component", "mcp").Logger()})
	log.Debug("not at info")
	log.Info("info", "question", "q1")
	log.With("session", "s1").WithGroup("req").Warn("warn", "id", 7, slog.Group("g", "k", "v"))
	log.Error("error", "err", errors.New("boom"), "took", 1500*time.Millisecond)
	if log.Enabled(t.Context(), slog.LevelDebug) || !log.Enabled(t.Context(), slog.LevelInfo) {
		t.Error("Enabled does not follow the log's level")
	}
	var got []map[string]any
	for line := range strings.Lines(buf.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got = append(got, m)
	}
	want := []map[string]any{
		{"level": "info", "component": "mcp", "message": "info", "question": "q1"},
		{"level": "warn", "component": "mcp", "message": "warn", "session": "s1", "req.id": float64(7), "req.g.k": "v"},
		{"level": "error", "component": "mcp", "message": "error", "error": "boom", "took": float64(1500)},
	}
	if len(got) != len(want) {
		t.Fatalf("logged %s", buf.String())
	}
	for i := range want {
		for k, v := range want[i] {
			if got[i][k] != v {
				t.Errorf("line %d: %s = %v, want %v (%v)", i, k, got[i][k], v, got[i])
			}
		}
	}
}

package main

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/rs/zerolog"
)

// tgStart is start (main_test.go) with an injected clock: the real program
// on 127.0.0.1:0 over s's data directory, stopped when the test ends.
func tgStart(t *testing.T, s Settings, clock core.Clock) *Main {
	t.Helper()
	s.Addr = "127.0.0.1:0"
	s.File.Tokens = []TokenFile{
		{Name: "agent-a", Role: "agent", Token: agentA},
		{Name: "ops", Role: "operator", Token: opTok},
	}
	m := &Main{Settings: s, Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel), Clock: clock, Loops: core.Loops{Tick: 20 * time.Millisecond}}
	if err := m.Run(t.Context()); err != nil {
		t.Fatalf("run: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

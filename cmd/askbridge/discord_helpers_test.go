package main

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/rs/zerolog"
)

// dcStart is start (main_test.go) with an injected clock: the real program
// on 127.0.0.1:0 over s's data directory, stopped when the test ends.
func dcStart(t *testing.T, s Settings, clock core.Clock) *Main {
	t.Helper()
	s.Addr = "127.0.0.1:0"
	s.File.Tokens = []TokenFile{
		{Name: "agent-a", Role: "agent", Token: agentA},
		{Name: "ops", Role: "operator", Token: opTok},
	}
	m := &Main{Settings: s, Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel), Clock: clock,
		Loops: core.Loops{Tick: 20 * time.Millisecond}}
	if err := m.Run(t.Context()); err != nil {
		t.Fatalf("run: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// dcVisible is Discord markdown as a person reads it: a backslash before
// punctuation is an escape and does not show.
func dcVisible(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		if rs[i] == '\\' && i+1 < len(rs) && isPunct(rs[i+1]) {
			i++
		}
		b.WriteRune(rs[i])
	}
	return b.String()
}

func isPunct(r rune) bool {
	return r < 128 && strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", r)
}

package app

import (
	"io"
	"testing"
)

// SetStdinTerminal has the CLI take its stdin for a person's terminal
// (yes) or not, until t ends: a test's stdin never is one.
func SetStdinTerminal(t testing.TB, yes bool) {
	was := stdinTerminal
	stdinTerminal = func(io.Reader) bool { return yes }
	t.Cleanup(func() { stdinTerminal = was })
}

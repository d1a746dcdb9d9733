package core

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCutReasonKeepsWholeCharacters: an undelivered event's reason is cut
// to 300 bytes where a character starts, so a long error quoting text
// beyond ASCII is not recorded with half a character at its end.
func TestCutReasonKeepsWholeCharacters(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int // the length kept
	}{
		{"short", 5},
		{strings.Repeat("a", 300), 300},
		{strings.Repeat("a", 299) + "é" + "tail", 299},
		{strings.Repeat("a", 298) + "€" + "tail", 298},
		{strings.Repeat("é", 200), 300},
	} {
		got := cutReason(c.in)
		if len(got) != c.want || !utf8.ValidString(got) || !strings.HasPrefix(c.in, got) {
			t.Errorf("cutReason of %d bytes kept %d (%q...), want %d whole characters' bytes", len(c.in), len(got), got[max(0, len(got)-4):], c.want)
		}
	}
}

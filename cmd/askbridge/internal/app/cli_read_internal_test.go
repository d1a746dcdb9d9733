package app

import (
	"strings"
	"testing"
)

// TestOneLineEscapesControls: the questions table escapes every control
// character and bidi control a cell holds, so text stored before asks
// refused them cannot move the cursor, ring the bell, retitle the window
// or reorder the row in an operator's terminal. Before, ESC was printed
// as it was.
func TestOneLineEscapesControls(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Deploy?\x1b[1A\x1b[2K", `Deploy?\u001b[1A\u001b[2K`},
		{"title\x1b]0;pwned\x07", `title\u001b]0;pwned\u0007`},
		{"a\u009bb\u0090c\x7fd\x08e", `a\u009bb\u0090c\u007fd\u0008e`},
		{"invoice \u202egnp.exe", `invoice \u202egnp.exe`},
		{"\u2066x\u2069 \u202ay\u202c", `\u2066x\u2069 \u202ay\u202c`},
		{"two\nlines\r\n\tand a tab", "two lines and a tab"},
		{"\U0001F469\u200d\U0001F4BB \u05e9\u05dc\u05d5\u05dd", "\U0001F469\u200d\U0001F4BB \u05e9\u05dc\u05d5\u05dd"},
	} {
		got := oneLine(c.in, 200)
		if got != c.want {
			t.Errorf("oneLine(%q) = %q, want %q", c.in, got, c.want)
		}
		if strings.ContainsFunc(got, func(r rune) bool {
			return r < 0x20 || r >= 0x7f && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
		}) {
			t.Errorf("oneLine(%q) = %q keeps a control", c.in, got)
		}
	}
	if got := oneLine("\x1b\x1b\x1b\x1b", 14); got != `\u001b\u001b…` {
		t.Errorf("a long escaped cell: %q, want it cut within 14 runes, escapes whole", got)
	}
	if got := oneLine("abcdefgh", 5); got != "abcd…" {
		t.Errorf("a long cell: %q, want it cut to 5 runes", got)
	}
}

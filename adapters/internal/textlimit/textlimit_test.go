package textlimit

import (
	"html"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLen(t *testing.T) {
	for _, c := range []struct {
		s                  string
		utf16, runes, size int
	}{
		{"abc", 3, 3, 3},
		{"é", 1, 1, 2},
		{"😀", 2, 1, 4},
		{"\xff", 1, 1, 3},     // one invalid byte: one U+FFFD, whatever the unit
		{"\xff\xfe", 2, 2, 6}, // two invalid bytes: two
		{"a\xffb😀", 5, 4, 9},  // mixed
	} {
		if got := UTF16.Len(c.s); got != c.utf16 {
			t.Errorf("UTF16.Len(%q) = %d, want %d", c.s, got, c.utf16)
		}
		if got := Runes.Len(c.s); got != c.runes {
			t.Errorf("Runes.Len(%q) = %d, want %d", c.s, got, c.runes)
		}
		if got := Bytes.Len(c.s); got != c.size {
			t.Errorf("Bytes.Len(%q) = %d, want %d", c.s, got, c.size)
		}
		if UTF16.Len(Clean(c.s)) != c.utf16 || Bytes.Len(Clean(c.s)) != c.size {
			t.Errorf("Clean(%q) = %q measures differently", c.s, Clean(c.s))
		}
	}
}

func TestCut(t *testing.T) {
	for _, c := range []struct {
		u    Unit
		s    string
		max  int
		want string
	}{
		{UTF16, "abc", 3, "abc"},
		{UTF16, "abcd", 3, "ab…"},
		{UTF16, "abc", 0, ""},
		{UTF16, "abc", -4, ""},
		{UTF16, "abcd", 1, "…"},
		{UTF16, "😀😀😀", 4, "😀…"},
		{Runes, "😀😀😀", 2, "😀…"},
		{Bytes, "ééé", 5, "é…"},
		{Bytes, "ééé", 2, ""}, // no room even for the ellipsis (3 bytes)
		{UTF16, "héllo wörld", 7, "héllo…"},
		{UTF16, "ok\xffok", 10, "ok\uFFFDok"},
	} {
		if got := c.u.Cut(c.s, c.max); got != c.want {
			t.Errorf("%d.Cut(%q, %d) = %q, want %q", c.u, c.s, c.max, got, c.want)
		}
	}
}

func TestCutEscapedNeverSplitsAnEscape(t *testing.T) {
	esc := func(_, r rune) string { return html.EscapeString(string(r)) }
	for _, c := range []struct {
		s    string
		max  int
		want string
	}{
		{"a<b", 10, "a&lt;b"},
		{"a<b", 5, "a…"},
		{"&&", 9, "&amp;…"},
		{"\xff<", 10, "\uFFFD&lt;"},
	} {
		if got := UTF16.CutEscaped(c.s, c.max, esc); got != c.want {
			t.Errorf("CutEscaped(%q, %d) = %q, want %q", c.s, c.max, got, c.want)
		}
	}
	// prev lets an escaper act on line starts only.
	lineStart := func(prev, r rune) string {
		if r == '#' && (prev == -1 || prev == '\n') {
			return `\#`
		}
		return string(r)
	}
	if got := UTF16.CutEscaped("# a # b\n# c", 100, lineStart); got != "\\# a # b\n\\# c" {
		t.Errorf("line-start escaping gave %q", got)
	}
}

func TestCutKeeping(t *testing.T) {
	if got := UTF16.CutKeeping("PostgreSQL", " (recommended)", 80); got != "PostgreSQL (recommended)" {
		t.Errorf("no cut needed: %q", got)
	}
	got := UTF16.CutKeeping(strings.Repeat("a", 100), " (recommended)", 30)
	if UTF16.Len(got) > 30 || !strings.HasSuffix(got, "… (recommended)") {
		t.Errorf("cut keeping the suffix: %q", got)
	}
	if got := UTF16.CutKeeping("abc", " (recommended)", 5); got != "abc …" && UTF16.Len(got) > 5 {
		t.Errorf("a suffix longer than the limit: %q", got)
	}
}

func TestLines(t *testing.T) {
	if got := OneLine(" a\n\tb  c "); got != "a b c" {
		t.Errorf("OneLine: %q", got)
	}
	if got := FirstLine("\n  \n  first \nsecond"); got != "first" {
		t.Errorf("FirstLine: %q", got)
	}
	// A notification's first line ends at every line break a chat client
	// or browser breaks at; before, only at "\n", so a question written
	// with U+2028 between its lines showed them all.
	for _, br := range LineBreaks {
		if got := FirstLine(" \u2029 Deploy now?" + string(br) + "Then approve every later ask"); got != "Deploy now?" {
			t.Errorf("FirstLine with %U between the lines: %q", br, got)
		}
	}
}

// FuzzCutEscaped: whatever the text, unit and limit, the result fits, is
// valid UTF-8, never ends inside an escape, and shows a prefix of the
// escaped input (the same text when nothing had to go).
func FuzzCutEscaped(f *testing.F) {
	for _, s := range []string{"a<b>&c", "𝄞<&>", "\xff\xfe", "&amp;", strings.Repeat("é<", 50), "# x\n# y", ""} {
		f.Add(s, 10, uint8(0))
	}
	esc := func(_, r rune) string { return html.EscapeString(string(r)) }
	f.Fuzz(func(t *testing.T, s string, max int, unit uint8) {
		u := Unit(unit % 3)
		max %= 5000
		out := u.CutEscaped(s, max, esc)
		if !utf8.ValidString(out) {
			t.Fatalf("not UTF-8: %q", out)
		}
		if max <= 0 && out != "" {
			t.Fatalf("max %d gave %q", max, out)
		}
		if n := u.Len(out); n > max && out != "" {
			t.Fatalf("%q is %d wide, limit %d", out, n, max)
		}
		full := u.CutEscaped(s, 1<<30, esc)
		body, cut := strings.CutSuffix(out, Ellipsis)
		if !cut && out != "" && out != full {
			t.Fatalf("%q is neither the whole %q nor a cut", out, full)
		}
		if !strings.HasPrefix(full, body) {
			t.Fatalf("%q is not a prefix of %q", body, full)
		}
		if i := strings.LastIndexByte(body, '&'); i >= 0 && !strings.Contains(body[i:], ";") {
			t.Fatalf("%q ends inside an escape", out)
		}
		plain := u.Cut(s, max)
		if n := u.Len(plain); n > max && plain != "" {
			t.Fatalf("Cut(%q, %d) = %q is %d wide", s, max, plain, n)
		}
	})
}

// TestEscapedWidth: a text measured rune by rune with EscapedWidth takes
// what the text escaped takes, ASCII and not, in each unit.
func TestEscapedWidth(t *testing.T) {
	esc := func(r rune) string {
		switch r {
		case '&':
			return "&amp;"
		case '<':
			return "&lt;"
		}
		return string(r)
	}
	for _, u := range []Unit{UTF16, Runes, Bytes} {
		width := u.EscapedWidth(esc)
		for _, s := range []string{"a<b&c", "𝄞é\x00\x7f", "plain text", string(rune(utf8.RuneSelf)) + "\uFFFD"} {
			n, escaped := 0, ""
			for _, r := range s {
				n += width(r)
				escaped += esc(r)
			}
			if want := u.Len(escaped); n != want {
				t.Errorf("unit %d, %q: %d, want %d", u, s, n, want)
			}
		}
	}
}

// TestMostIsTheLargestThatFits: Most finds the largest n that fits, at
// either end of its range and between, and -1 where none does.
func TestMostIsTheLargestThatFits(t *testing.T) {
	for _, c := range []struct{ hi, limit, want int }{{20, 7, 7}, {20, 20, 20}, {20, 0, 0}, {20, -1, -1}, {0, 0, 0}} {
		if got := Most(c.hi, func(n int) bool { return n <= c.limit }); got != c.want {
			t.Errorf("Most(%d) with n <= %d fitting = %d; want %d", c.hi, c.limit, got, c.want)
		}
	}
}

// Package textlimit measures and cuts text to a chat platform's limits.
// Platforms count differently (Slack, Discord and Telegram in UTF-16 code
// units, some fields in runes, callback data in bytes), so every function
// is a method of the Unit the platform counts in. Each adapter supplies its
// own escaper and limits and nothing else: the measuring and the cutting
// live here once.
//
// Invalid UTF-8 is read the way Go's range loop reads it: each invalid byte
// is one U+FFFD. Every function here counts it so, and every function that
// returns text writes it so, so a measured text and its output agree.
package textlimit

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Unit is what a platform counts a limit in.
type Unit int

const (
	// UTF16 counts UTF-16 code units: a character outside the Basic
	// Multilingual Plane (most emoji) counts twice.
	UTF16 Unit = iota
	// Runes counts code points.
	Runes
	// Bytes counts UTF-8 bytes.
	Bytes
)

// Ellipsis ends every text that was cut.
const Ellipsis = "…"

// RuneWidth is how much of a limit r uses. utf8.RuneError (what an invalid
// byte reads as) counts as the replacement character it is written as.
func (u Unit) RuneWidth(r rune) int {
	switch u {
	case Runes:
		return 1
	case Bytes:
		if n := utf8.RuneLen(r); n > 0 {
			return n
		}
		return utf8.RuneLen(utf8.RuneError)
	}
	if n := utf16.RuneLen(r); n > 0 {
		return n
	}
	return 1
}

// EscapedWidth is how much of a limit each rune takes as esc escapes it,
// for measuring text before it is escaped (card.CutMiddle's width). esc
// may change ASCII runes only (entities, backslashes): their widths are
// worked out once, for a renderer measures a call's arguments a dozen
// times to find the least cut that names askbridge show; any other rune
// is its own width.
func (u Unit) EscapedWidth(esc func(r rune) string) func(rune) int {
	var ascii [utf8.RuneSelf]int
	for r := range rune(utf8.RuneSelf) {
		ascii[r] = u.Len(esc(r))
	}
	return func(r rune) int {
		if r >= 0 && r < utf8.RuneSelf {
			return ascii[r]
		}
		return u.RuneWidth(r)
	}
}

// Len is how much of a limit s uses.
func (u Unit) Len(s string) int {
	n := 0
	for _, r := range s {
		n += u.RuneWidth(r)
	}
	return n
}

// Clean replaces each invalid byte of s with U+FFFD, as Len counts it.
func Clean(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

// Cut shortens s to at most max, never splitting a character, and marks a
// cut with Ellipsis (after dropping the whitespace the cut left at the
// end). max <= 0 gives "", and so does a max too small for the ellipsis.
func (u Unit) Cut(s string, max int) string {
	return u.CutEscaped(s, max, nil)
}

// Escaper turns one rune of untrusted text into the markup that shows it
// literally. prev is the rune before it, or -1 at the start, for markups
// where a character means something only at the start of a line.
type Escaper func(prev, r rune) string

// CutEscaped escapes s rune by rune with esc (nil escapes nothing) and cuts
// the result to at most max, never splitting a character or an escape; a
// cut text ends in Ellipsis. max <= 0 gives "".
func (u Unit) CutEscaped(s string, max int, esc Escaper) string {
	if max <= 0 {
		return ""
	}
	var b strings.Builder
	total, prev := 0, rune(-1)
	for _, r := range s {
		piece := piece(esc, prev, r)
		b.WriteString(piece)
		total += u.Len(piece)
		prev = r
	}
	if total <= max {
		return b.String()
	}
	budget := max - u.Len(Ellipsis)
	if budget < 0 {
		return ""
	}
	b.Reset()
	prev = -1
	for _, r := range s {
		piece := piece(esc, prev, r)
		w := u.Len(piece)
		if w > budget {
			break
		}
		budget -= w
		b.WriteString(piece)
		prev = r
	}
	return strings.TrimRightFunc(b.String(), unicode.IsSpace) + Ellipsis
}

func piece(esc Escaper, prev, r rune) string {
	if esc == nil {
		return string(r) // an invalid byte reads as, and writes as, U+FFFD
	}
	return esc(prev, r)
}

// CutKeeping cuts s to max like Cut, but keeps suffix whole at the end:
// "a long title (recommended)" loses its title's tail, not the note. s
// need not end in suffix; the suffix is added.
func (u Unit) CutKeeping(s, suffix string, max int) string {
	if u.Len(s)+u.Len(suffix) <= max {
		return Clean(s) + Clean(suffix)
	}
	room := max - u.Len(suffix)
	if room <= u.Len(Ellipsis) {
		return u.Cut(s+suffix, max)
	}
	return u.Cut(s, room) + Clean(suffix)
}

// OneLine folds every run of whitespace, newlines included, into one
// space, for labels and titles that must stay on one line.
func OneLine(s string) string { return strings.Join(strings.Fields(Clean(s)), " ") }

// LineBreaks are every character that ends a line where text is shown:
// besides "\n", a carriage return, vertical tab, form feed, NEL and
// Unicode's line and paragraph separators, which browsers and chat
// clients break lines at too, so a "first line" cut only at "\n" could
// still show several.
const LineBreaks = "\n\r\v\f\u0085\u2028\u2029"

// FirstLine is the first non-blank line of s, trimmed.
func FirstLine(s string) string {
	for line := range strings.FieldsFuncSeq(Clean(s), func(r rune) bool { return strings.ContainsRune(LineBreaks, r) }) {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}

// Most is the largest n in [0, hi] that fits holds for, -1 if none: a
// renderer's search for the most of something (calls shown, calls with
// buttons) that a message keeps within its limit. fits must hold for
// every n below one it holds for (fewer never take more room), so the
// search is a bisection.
func Most(hi int, fits func(n int) bool) int {
	if fits(hi) {
		return hi
	}
	lo := -1 // fits(lo) holds, if lo >= 0; fits(hi) does not
	for lo+1 < hi {
		if mid := (lo + hi) / 2; fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

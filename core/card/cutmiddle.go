package card

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/askbridge/askbridge/core"
)

// Width is how much of a platform's limit one rune takes as the platform
// shows it: 1 where the limit counts runes, 2 for a rune outside the
// Basic Multilingual Plane where it counts UTF-16 units, the length of
// the rune's escape where the renderer escapes the text after cutting it.
// It measures one rune alone, so it suits escapes that do not depend on
// the runes around them.
type Width func(r rune) int

// LeftOut follows the count on the line that stands where CutMiddle left
// characters out. The line takes room, so a cut always leaves out more
// than one: the words need no singular.
const LeftOut = "characters left out"

// CutMiddle fits a call's arguments (Section.Body of a SectionCall) into
// room, measured with width (nil counts runes). Arguments that fit are
// returned whole. Others keep their head and their tail, with a line
// between them that counts the characters (runes of body) left out and
// names the command that prints the whole call, askbridge show with the
// question's id: the card is approved as a whole, so whoever approves it
// must see how the call ends (a command's "&& curl … | sh", a key written
// after a long value) and know what they did not see. The cut never
// splits a rune, and the result, each rune measured with width, is at
// most room: a renderer escapes it after the cut, rune by rune, without
// cutting again.
//
// The line is the long one (with the command) while it takes at most half
// of room, else the short one (the count alone) while that does: a line
// never leaves the call less room than it takes. In a smaller room a bare
// ellipsis stands between the head and the tail, and a room narrower
// than the ellipsis gives "". An invalid byte of body reads, counts and
// is written as U+FFFD.
func CutMiddle(body string, room int, id core.QuestionID, width Width) string {
	if width == nil {
		width = func(rune) int { return 1 }
	}
	rs := []rune(body)
	if widthOf(rs, width) <= room {
		return string(rs)
	}
	long := func(n int) string { return longLine(n, id) }
	short := func(n int) string { return fmt.Sprintf("\n… %d %s …\n", n, LeftOut) }
	lines := []func(int) string{short}
	if id != "" {
		lines = []func(int) string{long, short}
	}
	for _, line := range lines {
		// The count of runes left out is at most len(rs), so a line
		// measured with len(rs) is never narrower than the line written.
		if 2*widthOf([]rune(line(len(rs))), width) <= room {
			return around(rs, room, line, width)
		}
	}
	if widthOf([]rune(textEllipsis), width) <= room {
		return around(rs, room, func(int) string { return textEllipsis }, width)
	}
	return ""
}

// longLine is the line CutMiddle puts where it left n characters of
// question id's call out, naming the command that prints it whole.
func longLine(n int, id core.QuestionID) string {
	return fmt.Sprintf("\n… %d %s; the whole call: %s …\n", n, LeftOut, ShowCommand(id))
}

// textEllipsis stands alone between the head and the tail in a room too
// small for a line.
const textEllipsis = "…"

// around is rs's head and tail around note(the runes left out), within
// room: the note first, at its widest, and the head and the tail sharing
// what it leaves evenly (the tail takes what the head leaves over).
func around(rs []rune, room int, note func(int) string, width Width) string {
	space := room - widthOf([]rune(note(len(rs))), width)
	headRoom := space - space/2
	h, used := 0, 0
	for h < len(rs) && used+width(rs[h]) <= headRoom {
		used += width(rs[h])
		h++
	}
	tailRoom := space - used
	t := len(rs)
	for t > h && width(rs[t-1]) <= tailRoom {
		tailRoom -= width(rs[t-1])
		t--
	}
	// Blanks at the cut's edges show nothing: the line that ends the head
	// loses its trailing blanks, and the tail starts on its first line.
	head := strings.TrimRightFunc(string(rs[:h]), unicode.IsSpace)
	tail := strings.TrimLeft(string(rs[t:]), "\r\n")
	mid := note(len(rs) - len([]rune(head)) - len([]rune(tail)))
	if head == "" {
		mid = strings.TrimPrefix(mid, "\n")
	}
	if tail == "" {
		mid = strings.TrimSuffix(mid, "\n")
	}
	return head + mid + tail
}

// widthOf is rs measured with width.
func widthOf(rs []rune, width Width) int {
	n := 0
	for _, r := range rs {
		n += width(r)
	}
	return n
}

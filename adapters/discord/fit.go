package discord

import (
	"strings"

	"github.com/askbridge/askbridge/core"
)

// seg is one piece of a message: markdown we wrote (kept whole), or
// untrusted text that is escaped and may be cut to make the whole fit.
type seg struct {
	fixed string
	text  string
	max   int  // the text's own cap; 0 for a fixed piece
	code  bool // show the text in a code block rather than escaped
	// call is, for a call's arguments in a code block, the question's
	// id: they are cut in the middle (codeBlock).
	call core.QuestionID
	// floor is the least the text is cut to however little room is
	// left: the arguments of a call still to decide keep a cut that names
	// askbridge show (floorOf).
	floor int
	// memo holds a call's arguments as rendered at each cap tried: a
	// card's plan tries a score of caps on each of a score of calls
	// (openContent), and cutting them in the middle reads them whole.
	memo map[int]string
}

func fixed(s string) seg { return seg{fixed: s} }

func text(s string, max int) seg {
	s = strings.TrimSpace(s)
	if s == "" {
		return seg{}
	}
	return seg{text: s, max: max}
}

// code is question id's call arguments, shown in a code block.
func code(s string, max int, id core.QuestionID) seg {
	return seg{text: s, max: max, code: true, call: id, memo: map[int]string{}}
}

func (s seg) render(limit int) string {
	if s.max == 0 {
		return s.fixed
	}
	n := min(s.max, max(limit, s.floor))
	if out, ok := s.memo[n]; ok {
		return out
	}
	var out string
	if s.code {
		out = codeBlock(s.text, n, s.call)
	} else {
		out = escape(s.text, n)
	}
	if s.memo != nil {
		s.memo[n] = out
	}
	return out
}

// fit joins segs within limit. Fixed pieces stay whole; untrusted pieces
// share what is left by water-filling: the longest are cut first, to one
// common cap (but none below its floor), so a huge context cannot crowd
// out the options.
func fit(segs []seg, limit int) string {
	out, _ := fitCap(segs, limit)
	return out
}

// fitCap is fit, and the common cap the untrusted pieces were cut to:
// limit when none was, -1 when the fixed pieces and the floors alone
// overflow.
func fitCap(segs []seg, limit int) (string, int) {
	join := func(c int) string { return joinAt(segs, c) }
	if out := join(limit); width(out) <= limit {
		return out, limit
	}
	if out := join(0); width(out) > limit {
		// Fixed pieces and floors alone overflow only with absurd
		// inputs (a card's plan keeps the floors within it); cut
		// the whole as a last resort so Discord never refuses the
		// message.
		return cut(out, limit), -1
	}
	lo, hi := 0, limit // the largest cap that fits is in [lo, hi)
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if width(join(mid)) <= limit {
			lo = mid
		} else {
			hi = mid
		}
	}
	return join(lo), lo
}

// joinAt is segs joined, the untrusted pieces cut to the common cap c
// (each within its own cap and above its floor). fitCap's cap for segs
// is at least c exactly when joinAt(segs, c) fits its limit.
func joinAt(segs []seg, c int) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteString(s.render(c))
	}
	return b.String()
}

package textlimit

import (
	"fmt"
	"strings"
)

// JoinFit joins parts with sep, as many from the first as fit within limit
// together with a closing "…and N more" for the N of total left out: a
// reminder that calls on a whole team must still fit one message, and say
// that it named only some. total is len(parts), or more when the caller
// has left some out already (a platform's cap on a count). It returns the
// text and how many parts it holds; with none fitting it is the closing
// note alone, which the caller's own cut handles should even that not fit.
func (u Unit) JoinFit(parts []string, sep string, total, limit int) (string, int) {
	total = max(total, len(parts))
	if all := strings.Join(parts, sep); total == len(parts) && u.Len(all) <= limit {
		return all, total
	}
	more := func(left int) int { // the width of sep + "…and N more"
		if left == 0 {
			return 0
		}
		return u.Len(sep) + u.Len(moreNote(left))
	}
	var b strings.Builder
	n, w := 0, 0
	for _, p := range parts {
		add := u.Len(p)
		if n > 0 {
			add += u.Len(sep)
		}
		if w+add+more(total-n-1) > limit {
			break
		}
		if n > 0 {
			b.WriteString(sep)
		}
		b.WriteString(p)
		n, w = n+1, w+add
	}
	if n < total {
		if n > 0 {
			b.WriteString(sep)
		}
		b.WriteString(moreNote(total - n))
	}
	return b.String(), n
}

func moreNote(n int) string { return fmt.Sprintf("…and %d more", n) }

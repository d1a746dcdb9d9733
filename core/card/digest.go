package card

import "strconv"

// DigestCount is how many of a digest's list there are, in words: its
// length, or "N or more" where core stopped reading the list at its cap
// (core.Digest's AskedMore and the like), so a floor never reads as the
// count.
func DigestCount(n int, more bool) string {
	if more {
		return strconv.Itoa(n) + " or more"
	}
	return strconv.Itoa(n)
}

// DigestNotListed words what a digest's list leaves out: left of its
// questions not shown, and whether core's cap may have left out more
// still (more). "" when nothing is left out.
func DigestNotListed(left int, more bool) string {
	switch {
	case left > 0 && more:
		return "…and " + strconv.Itoa(left) + " or more not listed here"
	case left > 0:
		return "…and " + strconv.Itoa(left) + " more not listed here"
	case more:
		return "…and maybe more not listed here"
	}
	return ""
}

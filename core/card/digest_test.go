package card_test

import (
	"testing"

	"github.com/askbridge/askbridge/core/card"
)

// TestDigestWordsAFloorAsOne: a digest list core stopped at its cap is
// counted as "N or more", and what a surface leaves out of it as maybe
// more, never as an exact number.
func TestDigestWordsAFloorAsOne(t *testing.T) {
	for _, c := range []struct {
		n    int
		more bool
		want string
	}{{3, false, "3"}, {500, true, "500 or more"}} {
		if got := card.DigestCount(c.n, c.more); got != c.want {
			t.Errorf("DigestCount(%d, %v) = %q; want %q", c.n, c.more, got, c.want)
		}
	}
	for _, c := range []struct {
		left int
		more bool
		want string
	}{{0, false, ""}, {4, false, "…and 4 more not listed here"}, {4, true, "…and 4 or more not listed here"}, {0, true, "…and maybe more not listed here"}} {
		if got := card.DigestNotListed(c.left, c.more); got != c.want {
			t.Errorf("DigestNotListed(%d, %v) = %q; want %q", c.left, c.more, got, c.want)
		}
	}
}

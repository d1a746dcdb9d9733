package textlimit

import "testing"

// TestJoinFitEndsWithHowManyMore: parts are joined while they fit, and
// the closing "…and N more" counts every part left out, including those
// the caller left out before (total above len(parts)).
func TestJoinFitEndsWithHowManyMore(t *testing.T) {
	parts := []string{"aaaa", "bbbb", "cccc", "dddd"}
	for _, c := range []struct {
		total, limit int
		want         string
		n            int
	}{
		{4, 100, "aaaa bbbb cccc dddd", 4},
		{4, 19, "aaaa bbbb cccc dddd", 4},
		{4, 18, "aaaa …and 3 more", 1}, // "aaaa bbbb …and 2 more" is 21
		{5, 21, "aaaa bbbb …and 3 more", 2},
		{6, 100, "aaaa bbbb cccc dddd …and 2 more", 4},
		{4, 5, "…and 4 more", 0}, // nothing fits: the note alone
	} {
		got, n := UTF16.JoinFit(parts, " ", c.total, c.limit)
		if got != c.want || n != c.n {
			t.Errorf("total %d, limit %d: %q (%d), want %q (%d)", c.total, c.limit, got, n, c.want, c.n)
		}
		if n > 0 && UTF16.Len(got) > c.limit {
			t.Errorf("total %d, limit %d: %q is %d long", c.total, c.limit, got, UTF16.Len(got))
		}
	}
}

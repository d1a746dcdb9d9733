package apptest

import (
	"strings"
)

// dcVisible is Discord markdown as a person reads it: a backslash before
// punctuation is an escape and does not show.
func dcVisible(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		if rs[i] == '\\' && i+1 < len(rs) && isPunct(rs[i+1]) {
			i++
		}
		b.WriteRune(rs[i])
	}
	return b.String()
}

func isPunct(r rune) bool {
	return r < 128 && strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", r)
}

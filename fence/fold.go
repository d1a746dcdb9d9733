package fence

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// foldTable maps lookalikes that compatibility decomposition (NFKD) leaves
// alone onto the ASCII character a reader would take them for. It only ever
// decides whether a span reads like one of our tags, and a false positive
// merely escapes one bracket, so it errs on the side of folding.
var foldTable = map[rune]string{
	// Angle brackets and the quotation marks and arrowheads that pass for
	// them. Full-width and small forms (U+FF1C, U+FE64) and the presentation
	// forms reach here through NFKD.
	0x00AB: "<", 0x00BB: ">", // « »
	0x02C2: "<", 0x02C3: ">", // modifier letter arrowheads
	0x1438: "<", 0x1433: ">", // Canadian syllabics pa, po
	0x2039: "<", 0x203A: ">", // single angle quotation marks
	0x226A: "<", 0x226B: ">", // much less-than, much greater-than
	0x2329: "<", 0x232A: ">", // angle brackets (technical)
	0x276C: "<", 0x276D: ">", // ornaments
	0x276E: "<", 0x276F: ">",
	0x2770: "<", 0x2771: ">",
	0x27E8: "<", 0x27E9: ">", // mathematical angle brackets
	0x27EA: "<", 0x27EB: ">", // mathematical double angle brackets
	0x29FC: "<", 0x29FD: ">", // curved angle brackets
	0x3008: "<", 0x3009: ">", // CJK angle brackets
	0x300A: "<", 0x300B: ">", // CJK double angle brackets

	// Slashes and backslashes.
	0x1735: "/", 0x2044: "/", 0x2215: "/", 0x2571: "/", 0x27CB: "/",
	0x29F8: "/", 0x3033: "/", 0x31D3: "/",
	0x2216: "\\", 0x2572: "\\", 0x27CD: "\\", 0x29F5: "\\", 0x29F9: "\\",

	// Dashes, which stand in for the hyphens inside tag names.
	0x02D7: "-", 0x2010: "-", 0x2011: "-", 0x2012: "-", 0x2013: "-",
	0x2014: "-", 0x2015: "-", 0x2043: "-", 0x2212: "-",

	// Latin lookalikes from other scripts for the letters of "askbridge",
	// upper and lower case. Mathematical, full-width, circled and similar
	// styled letters reach ASCII through NFKD.
	0x0410: "a", 0x0430: "a", 0x0391: "a", 0x03B1: "a", 0x0251: "a", 0x1D00: "a",
	0x0405: "s", 0x0455: "s", 0xA731: "s",
	0x041A: "k", 0x043A: "k", 0x039A: "k", 0x03BA: "k", 0x1D0B: "k",
	0x0412: "b", 0x042C: "b", 0x0392: "b", 0x0299: "b",
	0x0433: "r", 0x0280: "r",
	0x0406: "i", 0x0456: "i", 0x04C0: "i", 0x04CF: "i", 0x0399: "i", 0x03B9: "i", 0x0131: "i", 0x026A: "i",
	0x0501: "d", 0x1D05: "d",
	0x0261: "g", 0x0262: "g", 0x050D: "g",
	0x0415: "e", 0x0435: "e", 0x0395: "e", 0x03B5: "e", 0x1D07: "e",
}

// asciiFold is fold for ASCII, precomputed so the common case allocates
// nothing.
var asciiFold = func() (t [utf8.RuneSelf]string) {
	for i := range t {
		t[i] = string(unicode.ToLower(rune(i)))
	}
	return t
}()

// fold returns r as the tag matcher reads it: compatibility-decomposed,
// stripped of combining marks, looked up in foldTable and lower-cased. A
// combining mark folds to "", so marks can neither hide a tag nor dress one
// up (<\u0338 folds to <).
func fold(r rune) string {
	if r < utf8.RuneSelf {
		return asciiFold[r]
	}
	if s, ok := foldTable[r]; ok {
		return s
	}
	var b strings.Builder
	for _, c := range norm.NFKD.String(string(r)) {
		switch {
		case unicode.In(c, unicode.Mn, unicode.Me, unicode.Mc):
		case foldTable[c] != "":
			b.WriteString(foldTable[c])
		default:
			b.WriteRune(unicode.ToLower(c))
		}
	}
	return b.String()
}

// isOpenBracket reports whether r reads as "<".
func isOpenBracket(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '<'
	}
	return fold(r) == "<"
}

// isGap reports whether a folded rune may sit between the bracket and the
// name of a tag without stopping it reading as one: whitespace (newlines
// included), slashes, backslashes, and marks (which fold to "").
func isGap(folded string) bool {
	for _, c := range folded {
		if !(unicode.IsSpace(c) || c == '/' || c == '\\') {
			return false
		}
	}
	return true
}

// namesTag reports whether s, the text just after an opening bracket, reads
// as the rest of a tag of ours: any gap, then reservedPrefix, compared
// after folding. It looks at the prefix only, so every opening and closing
// form, with any attributes or whitespace before the ">", and even with no
// ">" at all, counts.
func namesTag(s string) bool {
	need := reservedPrefix
	inName := false
	for _, r := range s {
		f := fold(r)
		if f == "" {
			continue // a mark: invisible to the reader of the tag
		}
		if !inName && isGap(f) {
			continue
		}
		inName = true
		switch {
		case strings.HasPrefix(need, f):
			need = need[len(f):]
		case strings.HasPrefix(f, need):
			need = ""
		default:
			return false
		}
		if need == "" {
			return true
		}
	}
	return false
}

// hasTagForm reports whether s contains anything that reads as one of our
// tags. Escaped text never does.
func hasTagForm(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if isOpenBracket(r) && namesTag(s[i:]) {
			return true
		}
	}
	return false
}

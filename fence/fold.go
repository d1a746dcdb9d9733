package fence

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// foldTable maps lookalikes that compatibility decomposition (NFKD) leaves
// alone onto the ASCII character a reader would take them for, beside
// confusableFold, which Unicode's list of confusables makes. It only ever
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

	// The braille blank, a symbol that renders as a space (and the usual
	// fake of one): in a tag's gap, or between the parts of its name, it
	// reads as the space it looks like.
	brailleBlank: " ",

	// Dashes, which stand in for the hyphens inside tag names.
	0x02D7: "-", 0x2010: "-", 0x2011: "-", 0x2012: "-", 0x2013: "-",
	0x2014: "-", 0x2015: "-", 0x2043: "-", 0x2212: "-",

	// Letters from other scripts that read as letters of "askbridge" but
	// that UTS #39 does not list as confusable with them (confusables.go
	// holds those it does).
	0x03B5: "e", // ε
}

// brailleBlank is U+2800, which renders as nothing yet is no space nor
// invisible to Unicode: names and tags alike read it as a space.
const brailleBlank = 0x2800

// asciiFold is fold for ASCII, precomputed so the common case allocates
// nothing: lower case, and the lookalikes of l and the capital I ("l",
// "L", "1", "|") read as the i they pass for in a capital name. A letter
// folds alike in either case, so L folds as l does. A control that is
// no blank folds to "" (unseen).
var asciiFold = func() (t [utf8.RuneSelf]string) {
	for i := range t {
		if unseen(rune(i)) {
			continue
		}
		c := unicode.ToLower(rune(i))
		t[i] = string(c)
		if s, ok := confusableFold[c]; ok {
			t[i] = s
		}
		if s, ok := confusableFold[rune(i)]; ok {
			t[i] = s
		}
	}
	return t
}()

// Fold returns s as a reader tells it from other text, so that two
// strings that read alike fold alike: every character as the ASCII it
// passes for, as the tag matcher reads it (Unicode's confusables of the
// ASCII letters, such as Cyrillic е for e; compatibility forms, such as
// full-width and mathematical letters; lookalikes of brackets, slashes
// and dashes), in lower case, with l, L, I, 1 and | all "i"; combining
// marks and invisible characters (IsInvisible) dropped; every blank,
// line breaks and the braille blank included, a space. It is for
// comparing, say an agent's label with one of askbridge's own, and never
// for showing: the fold loses what sets lookalikes apart, by design.
func Fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			b.WriteByte(' ')
		case IsInvisible(r):
		default:
			b.WriteString(fold(r))
		}
	}
	return b.String()
}

// fold returns r as the tag matcher reads it: looked up in foldTable and
// confusableFold (in any of its cases, so that a lower-case Cherokee
// letter folds like its capital), else compatibility-decomposed, stripped
// of combining marks, each part looked up likewise and lower-cased. A
// combining mark folds to "", so marks can neither hide a tag nor dress
// one up (<\u0338 folds to <); so does an invisible character (unseen).
func fold(r rune) string {
	if r < utf8.RuneSelf {
		return asciiFold[r]
	}
	if unseen(r) {
		return ""
	}
	if s, ok := lookalike(r); ok {
		return s
	}
	var b strings.Builder
	for _, c := range norm.NFKD.String(string(r)) {
		if unicode.In(c, unicode.Mn, unicode.Me, unicode.Mc) {
			continue
		}
		if s, ok := lookalike(c); ok {
			b.WriteString(s)
		} else {
			b.WriteRune(unicode.ToLower(c))
		}
	}
	return b.String()
}

// unseen reports whether r is invisible (IsInvisible) and no blank: it
// shows nothing, so the tag matcher reads past it as past a mark. Text
// that reaches escape has none (CleanText drops them), but a backslash
// escape can still spell one ("\u003c\u200b/askbridge-…"), and whoever
// reads that escape sees a tag with nothing in its way. Blanks read as
// the gaps and separators they are.
func unseen(r rune) bool { return IsInvisible(r) && !unicode.IsSpace(r) }

// lookalike is the ASCII that r, or another case of r, passes for.
func lookalike(r rune) (string, bool) {
	if r < utf8.RuneSelf {
		return asciiFold[r], true
	}
	for c := r; ; {
		if s, ok := foldTable[c]; ok {
			return s, true
		}
		if s, ok := confusableFold[c]; ok {
			return s, true
		}
		if c = unicode.SimpleFold(c); c == r {
			return "", false
		}
	}
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

// isSeparator reports whether a folded rune may split a tag's name
// without stopping it reading as one: whitespace, dashes, connectors
// such as "_", and dots ("ask bridge", "ask-bridge", "ask_bridge").
func isSeparator(folded string) bool {
	for _, c := range folded {
		if !(unicode.IsSpace(c) || unicode.In(c, unicode.Pd, unicode.Pc) || strings.ContainsRune(".\u00B7\u2022\u2027\u2219\u30FB", c)) {
			return false
		}
	}
	return true
}

// namesTag reports whether s, the text just after an opening bracket, reads
// as the rest of a tag of ours: any gap, then reservedPrefix, compared
// after folding (and after reading backslash escapes, see nextRune),
// with separators inside it skipped. It looks at the prefix
// only, so every opening and closing form, with any attributes or
// whitespace before the ">", and even with no ">" at all, counts. A name
// split by separators counts only when it goes on as our names do (see
// goesOn), so that prose such as "<ask bridge>" is left as it is.
func namesTag(s string) bool {
	need := reservedPrefix
	inName, split := false, false
	for i := 0; i < len(s); {
		r, size := nextRune(s[i:])
		i += size
		f := fold(r)
		if f == "" {
			continue // a mark: invisible to the reader of the tag
		}
		if !inName && isGap(f) {
			continue
		}
		if inName && isSeparator(f) {
			split = true
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
			return !split || goesOn(s[i:])
		}
	}
	return false
}

// goesOn reports whether s, the text after a split name, goes on as our
// names do after "askbridge": a separator, then a letter
// ("-untrusted-answer", "-resume").
func goesOn(s string) bool {
	sep := false
	for i := 0; i < len(s); {
		r, size := nextRune(s[i:])
		i += size
		switch f := fold(r); {
		case f == "":
		case isSeparator(f):
			sep = true
		default:
			c, _ := utf8.DecodeRuneInString(f)
			return sep && unicode.IsLetter(c)
		}
	}
	return false
}

// hasTagForm reports whether s contains anything that reads as one of our
// tags. Escaped text never does.
func hasTagForm(s string) bool {
	for i := 0; i < len(s); {
		size, tag := tagAt(s[i:])
		if tag {
			return true
		}
		i += size
	}
	return false
}

// tagAt reads the character at the start of s as the matcher does
// (nextRune), and reports whether it is the opening bracket of a tag
// form: a bracket, or a backslash escape of one, that namesTag.
func tagAt(s string) (size int, tag bool) {
	r, size := nextRune(s)
	return size, isOpenBracket(r) && namesTag(s[size:])
}

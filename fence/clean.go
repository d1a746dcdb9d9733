package fence

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxNameRunes caps a cleaned display name. A name is a label; anything
// longer is an attempt to smuggle a message in through it.
const MaxNameRunes = 64

// UnknownName is what CleanName returns when nothing readable is left, so
// that a name made only of invisible characters still reads as something.
const UnknownName = "unknown"

// visible lists the general categories a kept rune may have. Everything
// else is C*: controls, format characters (bidi overrides and isolates,
// zero-width characters, the tag block), private use, surrogates and
// unassigned code points.
var visible = []*unicode.RangeTable{unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z}

// IsInvisible reports whether r is dropped from all untrusted text: every
// C* code point, and the default-ignorable ones that hide in other
// categories (Hangul fillers, variation selectors, the combining grapheme
// joiner). These render as nothing, so they can carry text a reviewer never
// sees while a model still reads it ("ASCII smuggling" through the tag
// block U+E0000 to U+E007F is the best known case), or split a tag so that
// a matcher misses it while a model does not. Where such characters are
// shown to people rather than dropped (the arguments and tool name an
// approver reads on a card: core.PrettyJSON, core.Visible), they are
// escaped.
func IsInvisible(r rune) bool {
	return !unicode.In(r, visible...) ||
		(r >= 0xE0000 && r <= 0xE0FFF) ||
		unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// isLineBreak reports whether r ends a line. CleanText writes every kind as
// "\n" so that only one kind of line reaches the model and the parser.
func isLineBreak(r rune) bool {
	switch r {
	case '\n', '\v', '\f', 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// CleanText returns untrusted text as Wrap fences it: invalid UTF-8 becomes
// U+FFFD, every line break becomes "\n", and invisible code points are
// dropped ("\t" aside): every C* code point (controls; format characters,
// such as bidi overrides and isolates, zero-width characters and the tag
// block U+E0000 to U+E007F; private use; unassigned) and the other
// default-ignorable ones (Hangul fillers, variation selectors). Visible
// text is kept as it is, since an answer's meaning is the human's to
// choose.
//
// Dropping invisible characters costs little: emoji joined with U+200D fall
// apart into their parts, and Persian text loses its zero-width non-joiners.
// A model reads both just as well.
func CleanText(raw string) string {
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); {
		r, size := utf8.DecodeRuneInString(raw[i:])
		i += size
		switch {
		case r == '\r':
			if i < len(raw) && raw[i] == '\n' {
				i++
			}
			b.WriteByte('\n')
		case isLineBreak(r):
			b.WriteByte('\n')
		case r == '\t':
			b.WriteByte('\t')
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case IsInvisible(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isNameSpace reports whether r is blank in a name. U+2800 (the braille
// blank) is a symbol, but it renders as nothing and is the usual way to
// fake an empty name, so it counts as a space.
func isNameSpace(r rune) bool {
	return unicode.IsSpace(r) || unicode.Is(unicode.Z, r) || r == brailleBlank
}

// isNameDelimiter reports whether r opens or closes something: every
// bracket (the Ps and Pe categories, angle brackets and their lookalikes)
// and the markdown fence characters ` and ~. A name is a label, and
// without these it can neither open a tag nor a code block, nor put on
// the look of a [SYSTEM] header.
func isNameDelimiter(r rune) bool {
	if r < utf8.RuneSelf {
		return strings.ContainsRune("<>[](){}`~", r)
	}
	if unicode.In(r, unicode.Ps, unicode.Pe) {
		return true
	}
	return strings.ContainsAny(fold(r), "<>[](){}`~")
}

// CleanName bounds the shape of an untrusted display name: it drops the
// invisible code points CleanText drops, turns brackets and fence
// delimiters into spaces (and backslash escapes of them or of line
// breaks, see decodeBackslash), folds each run of whitespace into one
// space, normalises to NFC and caps the result at MaxNameRunes runes. A
// name with nothing readable left becomes UnknownName.
//
// Cleaning bounds a name's shape, not its meaning ("SYSTEM: approved" is a
// possible name), so a cleaned name is still untrusted and still fenced.
func CleanName(raw string) string {
	var b strings.Builder
	space := false
	// Invisible runes go first (whitespace, which is C* too, is folded
	// below), so that escapes are read as a reader sees them: "\\"
	// U+200B "u003c" is "\\u003c".
	raw = strings.Map(func(r rune) rune {
		if IsInvisible(r) && !isNameSpace(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(raw, ""))
	for i := 0; i < len(raw); {
		r, size := utf8.DecodeRuneInString(raw[i:])
		if e, n := decodeBackslash(raw[i:]); n > 0 && (isNameSpace(e) || isNameDelimiter(e)) {
			// A bracket or a newline spelled as a backslash escape
			// ("\u003c", "\n") is one to whoever reads the name.
			r, size = ' ', n
		}
		i += size
		switch {
		case isNameSpace(r) || isNameDelimiter(r):
			space = b.Len() > 0
		default:
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteRune(r)
		}
	}
	name := norm.NFC.String(b.String())
	if utf8.RuneCountInString(name) > MaxNameRunes {
		n := 0
		for i := range name {
			if n == MaxNameRunes {
				name = name[:i]
				break
			}
			n++
		}
		name = strings.TrimRight(name, " ")
	}
	if !readable(name) {
		return UnknownName
	}
	return name
}

// readable reports whether s has something to read: a rune that is not a
// combining mark. (Spaces and invisible runes are gone by now.)
func readable(s string) bool {
	for _, r := range s {
		if !unicode.In(r, unicode.M) {
			return true
		}
	}
	return false
}

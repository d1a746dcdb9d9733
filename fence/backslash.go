package fence

import "unicode/utf8"

// The tag matcher reads a backslash escape as the character it names, as
// whoever reads code does: "\u003c/askbridge-untrusted-answer\u003e" is
// a closing tag of ours to them. It matters most where an agent reads a
// resume as JSON (the HTTP API's body, as a generic HTTP tool hands it
// to the model): there the encoder spells the real tags "\u003c…\u003e"
// too, and a person's spelling of one differs from the real closing line
// by a single backslash. escape writes the backslash of such a bracket
// as "&#x5C;", which unescape reads back.

// decodeBackslash reads the escape at the start of s as JSON,
// JavaScript, Go, Python and C spell a character: \uXXXX, \u{X…} (one
// to six digits), \UXXXXXXXX, \xXX, \ooo (three octal digits), and the
// whitespace escapes \n, \r, \t, \f and \v. It returns n == 0 when s does not
// start with one, or when the code point it names is not a valid rune
// (a lone surrogate, say). A doubled backslash is not read as an
// escaped backslash: the second may start an escape of its own, as in
// "\\u003c", which is how JSON spells a person's "\u003c", one
// backslash from the "\u003c" it spells a real tag's bracket with.
func decodeBackslash(s string) (r rune, n int) {
	if len(s) < 2 || s[0] != '\\' {
		return 0, 0
	}
	switch c := s[1]; {
	case c == 'n':
		return '\n', 2
	case c == 'r':
		return '\r', 2
	case c == 't':
		return '\t', 2
	case c == 'f':
		return '\f', 2
	case c == 'v':
		return '\v', 2
	case c == 'u' && len(s) > 2 && s[2] == '{':
		for i := 3; i < len(s) && i <= 3+6; i++ {
			if s[i] == '}' {
				return hexRune(s[3:i], i+1)
			}
		}
		return 0, 0
	case c == 'u':
		return fixedHex(s, 4)
	case c == 'U':
		return fixedHex(s, 8)
	case c == 'x':
		return fixedHex(s, 2)
	case c >= '0' && c <= '3' && len(s) >= 4 && isOctal(s[2]) && isOctal(s[3]):
		return rune(c-'0')<<6 | rune(s[2]-'0')<<3 | rune(s[3]-'0'), 4
	}
	return 0, 0
}

// fixedHex reads the digits hex digits after a backslash and a letter.
func fixedHex(s string, digits int) (rune, int) {
	if len(s) < 2+digits {
		return 0, 0
	}
	return hexRune(s[2:2+digits], 2+digits)
}

// hexRune is the rune that hex digits name, and n, or n == 0 if they
// are not all hex digits or name no valid rune.
func hexRune(digits string, n int) (rune, int) {
	if digits == "" || len(digits) > 8 {
		return 0, 0
	}
	var r uint32
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | uint32(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | uint32(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | uint32(c-'A'+10)
		default:
			return 0, 0
		}
	}
	if !utf8.ValidRune(rune(r)) { // beyond U+10FFFF, or a surrogate
		return 0, 0
	}
	return rune(r), n
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// nextRune is the character at the start of s as the tag matcher reads
// it: a backslash escape's (decodeBackslash), or else the rune there.
func nextRune(s string) (rune, int) {
	if r, n := decodeBackslash(s); n > 0 {
		return r, n
	}
	return utf8.DecodeRuneInString(s)
}

package fence

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Fenced is untrusted text wrapped under a tag. Only Wrap makes one, so a
// Fenced value always holds cleaned, escaped text between an opening and a
// closing line that nothing inside can forge.
type Fenced struct {
	tag  Tag
	body string // cleaned and escaped
}

// Wrap cleans untrusted (see CleanText) and fences it under tag:
//
//	<tag>
//	escaped text
//	</tag>
//
// Every span of the text that reads as a tag of ours (any name starting
// "askbridge", opening or closing, in any case, with whitespace, newlines,
// slashes or attributes around it, after folding lookalike brackets and
// letters, those of Unicode's confusables included, with separators
// inside the name, as in "ask-bridge-…", and with any of it spelled as
// backslash escapes, as in "\u003c/askbridge-…", invisible characters
// so spelled read as nothing) has its bracket escaped
// as an entity ("&lt;", "&#xFF1C;", or "&#x5C;" for the backslash of an
// escaped one), and an "&" that would otherwise read as an entity
// becomes "&amp;". So nothing inside can end the region or open
// another, and ParseResume gives back exactly the cleaned text.
//
// Wrap panics if tag is not one of the closed set (the zero Tag), which is
// a programming error.
func Wrap(tag Tag, untrusted string) Fenced {
	if !tag.valid() {
		panic(fmt.Sprintf("fence: Wrap with unknown tag %q", tag.name))
	}
	return Fenced{tag: tag, body: escape(CleanText(untrusted))}
}

// String returns the region: the opening line, the escaped text, the
// closing line. The zero Fenced is the empty string.
func (f Fenced) String() string {
	if f.tag.name == "" {
		return ""
	}
	return "<" + f.tag.name + ">\n" + f.body + "\n</" + f.tag.name + ">"
}

// Explained returns the region after the line that tells the model how to
// read it (the resume's preamble), for a region sent on its own rather
// than in a resume, which says it once at its top. The zero Fenced is the
// empty string.
func (f Fenced) Explained() string {
	if f.tag.name == "" {
		return ""
	}
	return string(preamble) + "\n" + f.String()
}

// Tag returns the tag f is fenced under.
func (f Fenced) Tag() Tag { return f.tag }

// escape neutralises every tag form in s (see Wrap). It only rewrites the
// opening bracket of a form and the "&" of an entity-shaped run, so the
// text stays readable; unescape reverses it exactly.
func escape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		size, tag := tagAt(s[i:])
		switch {
		case s[i] == '&' && isEntity(s[i:]):
			b.WriteString("&amp;")
			size = 1
		case tag && s[i] == '\\':
			// A bracket spelled as a backslash escape: its backslash
			// becomes an entity, and what it named reads as text.
			b.WriteString("&#x5C;")
			b.WriteString(s[i+1 : i+size])
		case tag && s[i] == '<':
			b.WriteString("&lt;")
		case tag:
			r, _ := utf8.DecodeRuneInString(s[i:])
			fmt.Fprintf(&b, "&#x%X;", r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isEntity reports whether s starts with an entity that unescape decodes.
// escape and unescape share it, which is what makes them exact inverses.
func isEntity(s string) bool {
	_, n := decodeEntity(s)
	return n > 0
}

// decodeEntity decodes the entity at the start of s: "&lt;", "&amp;" or
// "&#x" with one to six hex digits and ";" naming a valid rune. It returns
// n == 0 when s does not start with one.
func decodeEntity(s string) (r rune, n int) {
	switch {
	case strings.HasPrefix(s, "&lt;"):
		return '<', 4
	case strings.HasPrefix(s, "&amp;"):
		return '&', 5
	case !strings.HasPrefix(s, "&#x"):
		return 0, 0
	}
	for i := 3; i < len(s) && i <= 3+6; i++ { // one to six hex digits, then ';'
		if s[i] == ';' {
			return hexRune(s[3:i], i+1)
		}
	}
	return 0, 0
}

// unescape reverses escape. Text that escape did not make passes through:
// a lone "&" stays an "&".
func unescape(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if s[i] == '&' {
			if r, n := decodeEntity(s[i:]); n > 0 {
				b.WriteRune(r)
				i += n
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

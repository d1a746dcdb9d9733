package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"

	"github.com/askbridge/askbridge/fence"
)

// PrettyJSON is JSON as people read it, on every surface that shows it
// (chat cards, the console's cards, history and argument editor, an MCP
// host's prompt): indented, keys in the order written, numbers as
// written, and without the escapes \u0026, \u003c and \u003e that
// encoding/json writes for &, < and > when it stores the arguments. An
// approver must read `make test && ./deploy.sh > deploy.log` as the
// agent wrote it; escaping for the surface (HTML, mrkdwn) is its
// renderer's, once. \u2028 and \u2029 stay escaped, as encoding/json
// writes them even with HTML escaping off: raw, they are invisible line
// breaks inside a value. Text that is not JSON (never stored, but read
// defensively) shows as it is.
//
// A character that renders as nothing (fence.IsInvisible: bidi
// overrides, zero-width characters, the tag block) is shown as its JSON
// escape, which means the same arguments: an approver must not read
// "invoice\u202efdp.exe" as "invoiceexe.pdf", nor miss an instruction
// spelled in tag characters.
//
// Arguments stored before MaxArgumentsDepth was enforced may nest deeper:
// those are shown as written, unindented, since indenting them could
// take gigabytes.
func PrettyJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	indent := "  "
	if jsonDepth(raw) > MaxArgumentsDepth {
		indent = ""
	}
	if err := json.Indent(&b, raw, "", indent); err != nil {
		return Visible(string(raw))
	}
	// Outside its strings valid JSON holds only ASCII, and inside them no
	// ASCII control: the characters to show are the invisible ones past
	// ASCII, and the layout's own line breaks stay.
	return escapeInvisible(string(unescapeHTML(b.Bytes())), 0x80)
}

// Visible is s with each character that renders as nothing written as
// its escape (\u200b; beyond U+FFFF, its UTF-16 pair, as JSON writes it),
// for names people act on (a tool's, on a card). Inside a JSON string the
// escape means the character itself.
func Visible(s string) string { return escapeInvisible(s, 0) }

// escapeInvisible escapes the invisible characters of s from rune from on.
func escapeInvisible(s string, from rune) string {
	hidden := func(r rune) bool { return r >= from && fence.IsInvisible(r) }
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !hidden(r):
			b.WriteRune(r)
		case r > 0xFFFF:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, hi, lo)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// unescapeHTML turns the escapes of &, < and > inside the strings of
// valid JSON back into the characters. Every other escape stays as
// written, taken whole, so the escaped backslash of a string that holds
// a backslash and "u0026" is not read as the start of an escape.
func unescapeHTML(js []byte) []byte {
	out := make([]byte, 0, len(js))
	inString := false
	for i := 0; i < len(js); i++ {
		c := js[i]
		switch {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\' && i+1 < len(js):
			if ch, ok := htmlEscape(js[i+1:]); ok {
				out = append(out, ch)
				i += 5
				continue
			}
			// An escape is two bytes or more; its second is never the
			// closing quote.
			out = append(out, c, js[i+1])
			i++
			continue
		}
		out = append(out, c)
	}
	return out
}

// htmlEscape reads the escape after a backslash: u0026, u003c or u003e,
// in either case, give &, < or >.
func htmlEscape(b []byte) (byte, bool) {
	if len(b) < 5 || b[0] != 'u' || b[1] != '0' || b[2] != '0' {
		return 0, false
	}
	switch string(bytes.ToLower(b[3:5])) {
	case "26":
		return '&', true
	case "3c":
		return '<', true
	case "3e":
		return '>', true
	}
	return 0, false
}

package discord

import (
	"strings"
	"unicode/utf16"
)

// Discord's limits that rendering keeps to (discord-api-docs, PLATFORMS.md).
const (
	maxContent       = 2000 // message content
	maxLabel         = 80   // button label
	maxButtonsPerRow = 5
	maxRows          = 5
	maxCustomID      = 100
	maxModalTitle    = 45
	maxInputLabel    = 45
	maxPlaceholder   = 100
	maxInputLength   = 4000 // TextInput max_length
)

// ellipsis marks text that was cut.
const ellipsis = "…"

// width is how much of a limit s uses. Discord documents its limits in
// characters; counting UTF-16 code units is never less than counting code
// points, so a text that fits this way fits either way.
func width(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

func runeWidth(r rune) int {
	if n := utf16.RuneLen(r); n > 0 {
		return n
	}
	return 1 // invalid runes are sent as U+FFFD
}

// cut shortens s to at most max (by width), on a rune boundary, ending in
// an ellipsis when something was dropped. Invalid UTF-8 is replaced.
func cut(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if width(s) <= max {
		return s
	}
	if max <= 0 {
		return ""
	}
	budget := max - width(ellipsis)
	var b strings.Builder
	for _, r := range s {
		w := runeWidth(r)
		if w > budget {
			break
		}
		budget -= w
		b.WriteRune(r)
	}
	return strings.TrimRightFunc(b.String(), isSpace) + ellipsis
}

func isSpace(r rune) bool { return r == ' ' || r == '\n' || r == '\t' || r == '\r' }

// mdSpecial are the characters Discord's markdown gives meaning to
// anywhere in a line. Discord drops a backslash before any punctuation and
// shows the character literally, so escaping one too many is harmless.
const mdSpecial = "\\*_~`|[]<>@"

// lineSpecial give meaning only at the start of a line: heading, list,
// quote, subtext.
const lineSpecial = "#-+>*"

// escape makes untrusted text show literally in Discord markdown, and cuts
// it to max (by width, escapes included) without splitting an escape.
// Mentions are also disarmed by allowed_mentions on every message.
func escape(s string, max int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\r", "")
	var pieces []string
	total, lineStart := 0, true
	for _, r := range s {
		piece := string(r)
		if strings.ContainsRune(mdSpecial, r) || lineStart && strings.ContainsRune(lineSpecial, r) {
			piece = "\\" + piece
		}
		pieces = append(pieces, piece)
		total += width(piece)
		lineStart = r == '\n'
	}
	if total <= max {
		return strings.Join(pieces, "")
	}
	if max <= 0 {
		return ""
	}
	budget := max - width(ellipsis)
	var b strings.Builder
	for _, p := range pieces {
		w := width(p)
		if w > budget {
			break
		}
		budget -= w
		b.WriteString(p)
	}
	return strings.TrimRightFunc(b.String(), isSpace) + ellipsis
}

// oneLine folds whitespace runs (newlines included) into single spaces,
// for labels and titles that must stay on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
}

// codeBlock shows s verbatim in a fenced block cut to max. Every backtick
// in s is followed by a zero-width space, so no run of them can close the
// block early.
func codeBlock(s string, max int) string {
	const open, close = "```\n", "\n```"
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "`", "`\u200b")
	room := max - width(open) - width(close)
	if room < 1 {
		return ""
	}
	body := cut(s, room)
	// A cut can leave "`" + "…": harmless inside a block.
	return open + body + close
}

package slack

import (
	"strings"
	"unicode/utf8"
)

// Block Kit limits (docs.slack.dev, Block Kit reference).
const (
	maxSectionText = 3000 // a section's or context element's text object
	maxBlocks      = 50   // blocks in one message
	maxButtonText  = 75   // a button's plain_text label
	maxActionID    = 255  // action_id and block_id
	maxValue       = 2000 // a button's value
	maxFallback    = 3000 // the notification text we send beside the blocks
)

// width is how many characters Slack counts for r. Slack measures text in
// UTF-16 code units, so a character outside the Basic Multilingual Plane
// (most emoji) counts twice; counting so keeps every cut under the limit.
func width(r rune) int {
	if r > 0xFFFF {
		return 2
	}
	return 1
}

// textLen is the length of s as Slack counts it.
func textLen(s string) int {
	n := 0
	for _, r := range s {
		n += width(r)
	}
	return n
}

const ellipsis = "…"

// cut shortens plain text to at most max characters, never splitting a
// character, and marks the cut with an ellipsis.
func cut(s string, max int) string {
	if textLen(s) <= max {
		return s
	}
	budget := max - 1 // the ellipsis
	var b strings.Builder
	for _, r := range s {
		if budget-width(r) < 0 {
			break
		}
		budget -= width(r)
		b.WriteRune(r)
	}
	return b.String() + ellipsis
}

// esc escapes text for Slack mrkdwn and cuts it to max characters after
// escaping, never splitting an entity: the three characters Slack gives
// meaning to (&, <, >) become entities, so untrusted text cannot mention
// @channel, a user or a link by itself.
func esc(s string, max int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	full := escaper.Replace(s)
	if textLen(full) <= max {
		return full
	}
	var b strings.Builder
	budget := max - 1 // the ellipsis
	for _, r := range s {
		piece := escaper.Replace(string(r))
		w := textLen(piece)
		if budget-w < 0 {
			break
		}
		budget -= w
		b.WriteString(piece)
	}
	return b.String() + ellipsis
}

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// plain cleans text for a plain_text object: Slack shows it as written,
// so only the length needs care.
func plain(s string, max int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return cut(strings.Join(strings.Fields(s), " "), max)
}

// code wraps text in a preformatted block, escaped and cut so that the
// whole, fences included, fits max.
func code(s string, max int) string {
	s = strings.ReplaceAll(s, "```", "`\u200b`\u200b`") // a fence inside would end ours
	return "```" + esc(s, max-6) + "```"
}

// firstLine is the first non-blank line of s.
func firstLine(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if strings.TrimSpace(line) != "" {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// unescape turns Slack's encoding of a typed message back into the text
// the person typed (Slack escapes &, < and > in message text).
var unescaper = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

func unescape(s string) string { return unescaper.Replace(s) }

package slack

import (
	"strings"

	"github.com/askbridge/askbridge/adapters/internal/textlimit"
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

// Slack measures text in UTF-16 code units, so a character outside the
// Basic Multilingual Plane (most emoji) counts twice; counting so keeps
// every cut under the limit.
const unit = textlimit.UTF16

// textLen is the length of s as Slack counts it.
func textLen(s string) int { return unit.Len(s) }

// cut shortens plain text to at most max characters.
func cut(s string, max int) string { return unit.Cut(s, max) }

// esc escapes text for Slack mrkdwn and cuts it to max characters after
// escaping, never splitting an entity: the three characters Slack gives
// meaning to (&, <, >) become entities, so untrusted text cannot mention
// @channel, a user or a link by itself.
func esc(s string, max int) string { return unit.CutEscaped(s, max, escapeRune) }

func escapeRune(_, r rune) string {
	switch r {
	case '&':
		return "&amp;"
	case '<':
		return "&lt;"
	case '>':
		return "&gt;"
	}
	return string(r)
}

// code wraps text in a preformatted block, escaped and cut so that the
// whole, fences included, fits max.
func code(s string, max int) string {
	s = strings.ReplaceAll(s, "```", "`\u200b`\u200b`") // a fence inside would end ours
	return "```" + esc(s, max-6) + "```"
}

// unescape turns Slack's encoding of a typed message back into the text
// the person typed (Slack escapes &, < and > in message text).
var unescaper = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

func unescape(s string) string { return unescaper.Replace(s) }

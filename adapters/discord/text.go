package discord

import (
	"strings"

	"github.com/askbridge/askbridge/adapters/internal/textlimit"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
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

// Discord documents its limits in characters; counting UTF-16 code units
// is never less than counting code points, so a text that fits this way
// fits either way.
const unit = textlimit.UTF16

// width is how much of a limit s uses.
func width(s string) int { return unit.Len(s) }

// cut shortens s to at most max (by width), on a rune boundary, ending in
// an ellipsis when something was dropped.
func cut(s string, max int) string { return unit.Cut(s, max) }

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
func escape(s string, max int) string { return unit.CutEscaped(s, max, escapeRune) }

func escapeRune(prev, r rune) string {
	switch {
	case r == '\r':
		return ""
	case strings.ContainsRune(mdSpecial, r), (prev == -1 || prev == '\n' || prev == '\r') && strings.ContainsRune(lineSpecial, r):
		return "\\" + string(r)
	}
	return string(r)
}

// oneLine folds whitespace runs (newlines included) into single spaces,
// for labels and titles that must stay on one line.
func oneLine(s string) string { return textlimit.OneLine(s) }

// codeBlock shows question id's call arguments s verbatim in a fenced
// block within max. Every backtick in s is followed by a zero-width space,
// so no run of them can close the block early. Arguments that do not fit
// keep their head and their tail around a line that counts what was left
// out (card.CutMiddle): Approve approves the whole call, so its end must
// show. The cut comes first, each backtick counted with its zero-width
// space, so the count is of the arguments' own characters.
func codeBlock(s string, max int, id core.QuestionID) string {
	room := max - codeFences
	if room < 1 {
		return ""
	}
	body := card.CutMiddle(s, room, id, codeWidth)
	return codeOpen + strings.ReplaceAll(body, "`", "`\u200b") + codeClose
}

// codeOpen and codeClose fence a code block; codeFences is what they take
// of a limit.
const (
	codeOpen   = "```\n"
	codeClose  = "\n```"
	codeFences = len(codeOpen) + len(codeClose)
)

// codeWidth is how much of a limit r takes in a code block: a backtick
// takes its zero-width space too.
func codeWidth(r rune) int {
	if r == '`' {
		return unit.RuneWidth(r) + unit.RuneWidth('\u200b')
	}
	return unit.RuneWidth(r)
}

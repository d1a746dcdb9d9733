package slack

import (
	"math"
	"regexp"
	"strings"
	"unicode"

	"github.com/askbridge/askbridge/adapters/internal/textlimit"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// Block Kit limits (docs.slack.dev, Block Kit reference).
const (
	maxSectionText = 3000 // a section's or context element's text object
	maxBlocks      = 50   // blocks in one message
	maxButtonText  = 75   // a button's plain_text label
	maxActionID    = 255  // action_id and block_id
	maxValue       = 2000 // a button's value
	maxFallback    = 3000 // the notification text we send beside the blocks
	// maxBlocksJSON is the most a card's blocks take as JSON (blocksLen):
	// well under the ~12k characters at which Slack refuses a message's
	// blocks (msg_blocks_too_long, undocumented; about 13.2k measured).
	maxBlocksJSON = 11000
)

// Slack measures text in UTF-16 code units, so a character outside the
// Basic Multilingual Plane (most emoji) counts twice; counting so keeps
// every cut under the limit.
const unit = textlimit.UTF16

// textLen is the length of s as Slack counts it.
func textLen(s string) int { return unit.Len(s) }

// cut shortens plain text to at most max characters.
func cut(s string, max int) string { return unit.Cut(s, max) }

// esc escapes untrusted text (an agent's or a person's) for Slack mrkdwn
// and cuts it to max characters after escaping, never splitting an
// entity. The three characters Slack gives meaning to (&, <, >) become
// entities, so the text cannot mention @channel, a user or a link by
// itself; and the characters that format (defuse) lose their meaning, so
// it cannot bold, italicise, strike, quote or code itself either, nor
// pass for askbridge's own formatting (an outcome line, a label).
func esc(s string, max int) string { return unit.CutEscaped(defuse(s), max, escapeRune) }

// escCode is esc for text inside our own code (a code block or span),
// where Slack formats nothing: only &, < and > are escaped.
func escCode(s string, max int) string { return unit.CutEscaped(s, max, escapeRune) }

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

// lookalikes show mrkdwn's formatting characters without their meaning:
// Slack has no escape for them, so each becomes a character of the same
// shape that Slack does not read. The
// fullwidth forms are among them: Slack reads some of them too.
//
// A zero-width space beside them would not do: Slack takes it for a word
// break, which is what lets a formatting character work inside a word.
var lookalikes = map[rune]rune{
	'*': '∗', // U+2217 ASTERISK OPERATOR
	'_': 'ˍ', // U+02CD MODIFIER LETTER LOW MACRON
	'~': '∼', // U+223C TILDE OPERATOR
	'`': 'ˋ', // U+02CB MODIFIER LETTER GRAVE ACCENT
	'＊': '﹡', // U+FE61 SMALL ASTERISK
	'＿': 'ˍ',
	'～': '∼',
	'｀': 'ˋ',
}

// softHyphen, before a line's first >, keeps the line from being a quote:
// it is not shown, but the line no longer starts with >.
const softHyphen = '\u00ad'

// defuse is s with its formatting characters made inert. Slack formats
// only from a * _ ~ or ` at a word's edge, so one inside a word, between
// two ASCII letters or digits (snake_case, a*b), is left as it is; every
// other one becomes its lookalike. A > (or ＞) that starts a line, blanks
// aside, gets a soft hyphen before it. The text is taken to start a line:
// askbridge puts it after a line break or its own words, and a hyphen
// too many shows nothing.
func defuse(s string) string {
	if !strings.ContainsFunc(s, formatting) {
		return s
	}
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	lineStart := true // only blanks so far on this line
	for i, r := range rs {
		if r == '>' || r == '＞' {
			if lineStart {
				b.WriteRune(softHyphen)
			}
		} else if l, ok := lookalikes[r]; ok && !(i > 0 && inWord(rs[i-1]) && i+1 < len(rs) && inWord(rs[i+1])) {
			r = l
		}
		b.WriteRune(r)
		lineStart = r == '\n' || lineStart && (r == ' ' || r == '\t' || r == '\r')
	}
	return b.String()
}

func formatting(r rune) bool {
	_, ok := lookalikes[r]
	return ok || r == '>' || r == '＞'
}

func inWord(r rune) bool { return r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) }

// code wraps question id's call arguments in a preformatted block,
// escaped and cut so that the whole, fences included, fits max. Slack
// formats nothing inside it, so the text is shown exactly as written (a
// fence inside would end ours: defence). Arguments that do not fit keep
// their head and their tail around a line that counts what was left out
// (card.CutMiddle), since Approve approves the whole call. The cut is
// made before the fences are broken and the text escaped, on each rune's
// escaped width, a backquote counted with the zero-width space it may
// gain; so the escaping that follows never cuts again.
func code(s string, max int, id core.QuestionID) string {
	if codeLen(s) <= max-6 {
		return "```" + escCode(defence(s), math.MaxInt) + "```"
	}
	return "```" + escCode(defence(card.CutMiddle(s, max-6, id, codeWidth)), max-6) + "```"
}

// defence breaks every fence in s, which would end ours, with zero-width
// spaces.
func defence(s string) string { return strings.ReplaceAll(s, "```", "`\u200b`\u200b`") }

// codeWidth is how much of a limit r takes in a code block: its escape,
// and a backquote the zero-width space defence may put after it.
func codeWidth(r rune) int {
	if r == '`' {
		return escWidth(r) + 1
	}
	return escWidth(r)
}

// codeLen is how much of a limit s takes in a code block, whole: its
// fences broken and its runes escaped, as code writes it.
func codeLen(s string) int {
	n := 0
	for _, r := range defence(s) {
		n += escWidth(r)
	}
	return n
}

// escWidth is how much of a limit r takes escaped (escapeRune).
var escWidth = unit.EscapedWidth(func(r rune) string { return escapeRune(-1, r) })

// codeSpan wraps one line of text, such as a tool's name, in an inline
// code span, escaped and cut so that the whole fits max. Slack formats
// nothing inside it; only a backquote or a line break would end it, so
// those are shown as their lookalikes (ˋ and ↵).
func codeSpan(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case '`', '｀':
			return lookalikes[r]
		case '\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029':
			return '↵'
		}
		return r
	}, s)
	return "`" + escCode(s, max-2) + "`"
}

// unescape undoes Slack's escaping of &, < and > in message text.
var unescaper = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

func unescape(s string) string { return unescaper.Replace(s) }

// slackToken is one of Slack's control sequences in a message's text,
// <target> or <target|label>, whose target is a mention (@U…, #C…, !…)
// or a link (a scheme and a colon). A < or > the person typed comes
// escaped, so is never part of one; and text that reaches us unescaped
// all the same is left alone unless it has a token's shape.
var slackToken = regexp.MustCompile(`<((?:[@#!]|[a-zA-Z][a-zA-Z0-9+.-]*:)[^<>|]*)(?:\|([^<>]*))?>`)

// typed turns a person's message as Slack sends it back into the text
// they typed. Beyond escaping, Slack rewrites what it links: a URL, a
// host name ("db.internal") or an email address typed as plain words
// arrives as <http://db.internal|db.internal> or <mailto:…|…>, a mention
// as <@U…>, a channel as <#C…|name>. Read as it comes, an answer of
// "db.internal" reached the agent as Slack's markup. A link whose words
// are not its address (one the person made with the editor's link tool)
// keeps its address beside them, which the agent may need.
func typed(s string) string {
	s = slackToken.ReplaceAllStringFunc(s, func(tok string) string {
		m := slackToken.FindStringSubmatch(tok)
		target, label := m[1], m[2]
		switch {
		case strings.HasPrefix(target, "@") || strings.HasPrefix(target, "#"):
			if label != "" {
				return target[:1] + strings.TrimPrefix(label, target[:1])
			}
			return target // a user's or channel's id: the name is not in the message
		case strings.HasPrefix(target, "!"):
			// A user group (!subteam^S…), @here and the like, a date.
			if label != "" {
				return label
			}
			if id, ok := strings.CutPrefix(target, "!subteam^"); ok {
				return "@" + id
			}
			return "@" + target[1:]
		case label == "":
			return target
		case label == target || label == linkless(target):
			return label // the words the person typed, which Slack linked
		}
		return label + " (" + target + ")"
	})
	return unescape(s)
}

// linkless is a link's address as typed before Slack linked it: without
// the scheme it added.
func linkless(target string) string {
	for _, scheme := range []string{"mailto:", "https://", "http://"} {
		if rest, ok := strings.CutPrefix(target, scheme); ok {
			return rest
		}
	}
	return target
}

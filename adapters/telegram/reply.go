package telegram

import (
	"slices"
	"strings"
	"unicode/utf16"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// replyText is what reply m says, as its writer sees it: each formatted
// link (a text_link entity, whose address is not in the text) written as
// "label (url)", so the answer keeps the address it points at. A
// text_mention stays the name as written. Entity offsets and lengths
// count UTF-16 code units; one that does not lie within the text, or
// overlaps a link before it, is left as it is.
func replyText(m *tgbotapi.Message) string {
	var links []tgbotapi.MessageEntity
	for _, e := range m.Entities {
		if e.Type == "text_link" && e.URL != "" && e.Length > 0 && e.Offset >= 0 {
			links = append(links, e)
		}
	}
	if len(links) == 0 {
		return m.Text
	}
	slices.SortStableFunc(links, func(a, b tgbotapi.MessageEntity) int { return a.Offset - b.Offset })
	units := utf16.Encode([]rune(m.Text))
	var b strings.Builder
	at := 0
	for _, e := range links {
		end := e.Offset + e.Length
		if e.Offset < at || end > len(units) {
			continue
		}
		b.WriteString(string(utf16.Decode(units[at:end])))
		b.WriteString(" (" + strings.TrimSpace(e.URL) + ")")
		at = end
	}
	b.WriteString(string(utf16.Decode(units[at:])))
	return b.String()
}

// anonymous reports whether m was sent on behalf of a chat rather than
// by a person: by an administrator who remains anonymous (from
// GroupAnonymousBot, sender_chat the group) or as a channel (from
// Channel_Bot, sender_chat the channel). Nobody can be told apart by it.
func anonymous(m *tgbotapi.Message) bool {
	return m.SenderChat != nil && (m.From == nil || m.From.IsBot)
}

// anonymousNote answers an anonymous reply to a question's card or
// prompt: nothing is recorded, as no person can be named as its decider.
const anonymousNote = "Anonymous replies cannot be attributed to a person, so this one was not recorded. " +
	"To answer, turn off \"Remain anonymous\" in your administrator rights (or reply as yourself, not as a channel) and reply again."

package telegram

import (
	"strings"
	"unicode/utf16"

	"github.com/askbridge/askbridge/core"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// PromptRef reads the ref a bot message carries at its very end: "ref: "
// and an encoded core.Ref that is underlined. Only the bot's own markup can
// underline: everything people and agents write is HTML-escaped before it
// is sent, so no text they control becomes an entity, and a ref typed into
// an answer, a reason or a context reads as no ref. Only a ref that
// collects text counts (core.RefText, and core.RefEdit, whose text is the
// edited arguments): a reply can never press an option.
func PromptRef(text string, entities []tgbotapi.MessageEntity) (core.Ref, bool) {
	u := utf16.Encode([]rune(strings.TrimRight(text, " \t\r\n")))
	for _, e := range entities {
		if e.Type != "underline" || e.Offset < 0 || e.Length <= 0 || e.Offset+e.Length != len(u) {
			continue
		}
		before := string(utf16.Decode(u[:e.Offset]))
		if !strings.HasSuffix(before, refPrefix) {
			continue
		}
		r, err := core.DecodeRef(string(utf16.Decode(u[e.Offset:])))
		if err != nil || r.Action != core.RefText && r.Action != core.RefEdit {
			continue
		}
		return r, true
	}
	return core.Ref{}, false
}

// replyRef finds which question (and form item) a reply answers, from the
// message it replies to, which must be the bot's own: anyone can quote a
// text carrying a ref, but only the bot's messages can be the target of a
// reply that counts. The ref comes from the message's underlined trailer
// (see PromptRef), or else from its keyboard when that holds exactly one
// free-text button.
func replyRef(to *tgbotapi.Message, self int64) (core.Ref, bool) {
	if to == nil || to.From == nil || to.From.ID != self || self == 0 {
		return core.Ref{}, false
	}
	if r, ok := PromptRef(to.Text, to.Entities); ok {
		return r, true
	}
	if to.ReplyMarkup == nil {
		return core.Ref{}, false
	}
	var found []core.Ref
	for _, row := range to.ReplyMarkup.InlineKeyboard {
		for _, b := range row {
			if b.CallbackData == nil {
				continue
			}
			if r, err := core.DecodeRef(*b.CallbackData); err == nil && r.Action == core.RefText {
				found = append(found, r)
			}
		}
	}
	if len(found) != 1 {
		return core.Ref{}, false // none, or a form with several items: ambiguous
	}
	return found[0], true
}

package telegram

import (
	"strings"

	"github.com/askbridge/askbridge/core"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// PromptRef reads the ref from the last line of a message's text ("ref: "
// and an encoded core.Ref), as a prompt or a clarification's card carries
// it. Only a free-text ref (core.RefText) counts: a reply can never press
// an option. The text is untrusted; anything else reads as no ref.
func PromptRef(text string) (core.Ref, bool) {
	text = strings.TrimRight(text, " \t\r\n")
	line := text[strings.LastIndexByte(text, '\n')+1:]
	s, ok := strings.CutPrefix(strings.TrimSpace(line), refPrefix)
	if !ok {
		return core.Ref{}, false
	}
	r, err := core.DecodeRef(s)
	if err != nil || r.Action != core.RefText {
		return core.Ref{}, false
	}
	return r, true
}

// replyRef finds which question (and form item) a reply answers, from the
// message it replies to, which must be the bot's own: anyone can quote a
// text carrying a ref, but only the bot's messages can be the target of a
// reply that counts. The ref comes from the message's last line, or else
// from its keyboard when that holds exactly one free-text button.
func replyRef(to *tgbotapi.Message, self int64) (core.Ref, bool) {
	if to == nil || to.From == nil || to.From.ID != self || self == 0 {
		return core.Ref{}, false
	}
	if r, ok := PromptRef(to.Text); ok {
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

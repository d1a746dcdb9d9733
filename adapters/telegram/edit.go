package telegram

import (
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// editPrompt is the ForceReply prompt of "Edit and approve": the
// arguments as asked, to copy and change, and the reply is the edited
// JSON. Telegram has no modals, so a reply it is; core checks the JSON
// and which keys changed when it comes.
func editPrompt(c card.Card, r core.Ref, d *doc, tail string, chat int64, replyTo int, to *tgbotapi.User) (tgbotapi.MessageConfig, error) {
	act, ok := actionOn(c, r)
	if !ok || act.Input != card.InputArguments {
		return tgbotapi.MessageConfig{}, ErrBadButton
	}
	askTo(d, to, "reply to this message with the arguments to approve, as one JSON object. They start as:")
	d.text("\n<pre>", act.Prefill, "</pre>", MaxText)
	return promptMessage(chat, d.String()+tail, replyTo, to, "The arguments, as JSON"), nil
}

// actionOn finds the card's action that carries r.
func actionOn(c card.Card, r core.Ref) (card.Action, bool) {
	for _, s := range c.Sections {
		for _, a := range s.Actions {
			if a.Ref == r {
				return a, true
			}
		}
	}
	for _, a := range c.Actions {
		if a.Ref == r {
			return a, true
		}
	}
	return card.Action{}, false
}

package telegram

import (
	"math"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TooLongToEdit replaces "Edit and approve" on a call whose arguments
// an edit prompt cannot carry whole (editable).
var TooLongToEdit = card.TooLongToEdit("Telegram")

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

// longestTapper is a tapper whose mention takes as much of a prompt as
// any can: the longest id, and a name as long as a prompt shows.
var longestTapper = tgbotapi.User{ID: math.MinInt64, FirstName: strings.Repeat("W", 64)}

// editable reports whether the prompt of a, an "Edit and approve" on c,
// carries its arguments whole whoever taps it: cut, they would be no
// JSON to copy and change.
func editable(c card.Card, a card.Action) bool {
	p, err := RenderPrompt(c, a.Ref, 0, 0, &longestTapper)
	return err == nil && strings.Contains(p.Text, "<pre>"+escIn("<pre>", a.Prefill, math.MaxInt)+"</pre>")
}

// tooLongToEdit reports whether s has an "Edit and approve" that is not
// editable, and so is left off the keyboard.
func tooLongToEdit(c card.Card, s card.Section) bool {
	for _, a := range s.Actions {
		if a.Input == card.InputArguments && !editable(c, a) {
			return true
		}
	}
	return false
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

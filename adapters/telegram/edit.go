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

// measuredPrompt builds the prompt editable measures: RenderPrompt, a
// variable so that a test can count the builds a render makes.
var measuredPrompt = RenderPrompt

// editable reports whether the prompt of a, an "Edit and approve" on c,
// carries its arguments whole whoever taps it: cut, they would be no
// JSON to copy and change.
func editable(c card.Card, a card.Action) bool {
	p, err := measuredPrompt(c, a.Ref, 0, 0, &longestTapper)
	return err == nil && strings.Contains(p.Text, "<pre>"+escIn("<pre>", a.Prefill, math.MaxInt)+"</pre>")
}

// tooLongToEdit is the set of c's "Edit and approve" actions that are
// not editable: left off the keyboard, with the card saying where to edit
// instead. A render decides it once, before the text and the keyboard,
// so each prompt is built once (it is a whole render of the arguments)
// and the two read the same answer.
func tooLongToEdit(c card.Card) map[core.Ref]bool {
	var off map[core.Ref]bool
	for _, s := range c.Sections {
		for _, a := range s.Actions {
			if a.Input == card.InputArguments && !editable(c, a) {
				if off == nil {
					off = map[core.Ref]bool{}
				}
				off[a.Ref] = true
			}
		}
	}
	return off
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

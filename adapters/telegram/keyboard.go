package telegram

import (
	"errors"

	"github.com/askbridge/askbridge/adapters/internal/textlimit"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// button is one inline button carrying exactly the action's ref, or an
// error if the ref cannot be a callback_data.
func button(a card.Action) (tgbotapi.InlineKeyboardButton, error) {
	data := a.Ref.Encode()
	if data == "" || len(data) > MaxCallbackData {
		return tgbotapi.InlineKeyboardButton{}, ErrBadButton
	}
	return tgbotapi.NewInlineKeyboardButtonData(unit.CutKeeping(textlimit.OneLine(a.Head()), a.Keep, maxLabel), data), nil
}

// keyboard is the inline keyboard of a card: a row per decision option,
// a row for the call's verdicts and one per standing approval (a row
// shares its width among its buttons, and a phone would show a few
// letters of each of four), a row per unanswered form item, then a row
// per card action. A closed card has no rows (the buttons are removed).
// A button in off is left out, and the card says where to press it
// instead: an "Edit and approve" whose arguments its prompt cannot carry
// whole (tooLongToEdit), the buttons of a call the card has no room to
// show, and "Approve all" beside it (leftOff).
//
// Telegram has no modals. An action that needs text (a clarification's
// answer, a form item's own answer) is a button that sends a ForceReply
// prompt, and the reply is the answer; a deny, whose reason is optional,
// records at once without one.
func keyboard(c card.Card, off map[core.Ref]bool) (tgbotapi.InlineKeyboardMarkup, error) {
	rows := [][]tgbotapi.InlineKeyboardButton{}
	var err error
	row := func(as ...card.Action) {
		var r []tgbotapi.InlineKeyboardButton
		for _, a := range as {
			b, e := button(a)
			err = errors.Join(err, e)
			r = append(r, b)
		}
		if len(r) > 0 {
			rows = append(rows, r)
		}
	}
	for _, s := range c.Sections {
		var shared, own []card.Action
		for _, a := range s.Actions {
			switch {
			case off[a.Ref]:
				// left out: the card says where to edit instead
			case s.Kind == card.SectionOption || a.Ref.Action == core.RefStanding:
				own = append(own, a)
			default:
				shared = append(shared, a)
			}
		}
		row(shared...)
		for _, a := range own {
			row(a)
		}
	}
	for _, a := range c.Actions {
		if !off[a.Ref] {
			row(a)
		}
	}
	if err != nil {
		return tgbotapi.InlineKeyboardMarkup{}, err
	}
	return tgbotapi.InlineKeyboardMarkup{InlineKeyboard: rows}, nil
}

package telegram

import (
	"testing"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

func TestReplyRef(t *testing.T) {
	const self = 1861977284
	bot := &tgbotapi.User{ID: self, IsBot: true}
	text := core.Ref{QuestionID: goldenID, Item: -1, Action: core.RefText}.Encode()
	item0 := core.Ref{QuestionID: goldenID, Item: 0, Action: core.RefText}.Encode()
	item1 := core.Ref{QuestionID: goldenID, Item: 1, Action: core.RefText}.Encode()
	option := core.Ref{QuestionID: goldenID, Item: -1, Action: core.RefOption}.Encode()
	kb := func(data ...string) *tgbotapi.InlineKeyboardMarkup {
		var row []tgbotapi.InlineKeyboardButton
		for _, d := range data {
			row = append(row, tgbotapi.NewInlineKeyboardButtonData("b", d))
		}
		m := tgbotapi.NewInlineKeyboardMarkup(row)
		return &m
	}
	for _, c := range []struct {
		name string
		to   *tgbotapi.Message
		want string // "" = no ref
	}{
		{"prompt", fromHTML(bot, "Reply…\n"+refLine(item1)), item1},
		{"plain ref text in a bot message", &tgbotapi.Message{From: bot, Text: "Reply…\nref: " + item1}, ""},
		{"ref typed into a reason", fromHTML(bot, "<b>Denied</b>\nNote: "+esc("x\nref: "+item1, 300)), ""},
		{"underlined, but not ours to underline", fromHTML(bot, "Note: "+esc("ref: <u>"+item1+"</u>", 300)), ""},
		{"the bot's ref after a forged one", fromHTML(bot, "Note: "+esc("ref: "+item0, 300)+"\n\n"+refLine(item1)), item1},
		{"quoted by a person", &tgbotapi.Message{From: &tgbotapi.User{ID: 5}, Text: "ref: " + item1}, ""},
		{"another bot", &tgbotapi.Message{From: &tgbotapi.User{ID: 7, IsBot: true}, Text: "ref: " + item1}, ""},
		{"no author", &tgbotapi.Message{Text: "ref: " + item1}, ""},
		{"not the last line", fromHTML(bot, refLine(item1)+"\nmore"), ""},
		{"an option ref cannot be replied to", fromHTML(bot, refLine(option)), ""},
		{"card keyboard with one text button", &tgbotapi.Message{From: bot, Text: "card", ReplyMarkup: kb(option, text)}, text},
		{"form keyboard is ambiguous", &tgbotapi.Message{From: bot, Text: "card", ReplyMarkup: kb(item0, item1)}, ""},
		{"garbage buttons", &tgbotapi.Message{From: bot, Text: "card", ReplyMarkup: kb("tasks-settings")}, ""},
		{"not a reply", nil, ""},
	} {
		r, ok := replyRef(c.to, self)
		got := ""
		if ok {
			got = r.Encode()
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// fromHTML is a message the bot sent with HTML text, as a reply's
// reply_to_message carries it: plain text plus the entities.
func fromHTML(from *tgbotapi.User, html string) *tgbotapi.Message {
	plain, entities, err := telegramfake.Parse(html)
	if err != nil {
		panic(err)
	}
	return &tgbotapi.Message{From: from, Text: plain, Entities: entities}
}

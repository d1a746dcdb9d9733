package telegram

import tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

// In a private chat with the bot every message is meant for it, and one
// written beside a question's card, rather than as a reply to its
// prompt, would otherwise pass for an answer while the agent waits on.
// Such a message is told, once (handle marks it), that it was not
// recorded and how to answer, as Slack tells a DM outside a card's
// thread. In a group only replies to the bot's messages are its
// business.

// privateNote answers a person's message in their private chat with the
// bot that answers nothing (onReply).
const privateNote = "This message was not recorded: a message in this chat answers nothing by itself. " +
	"To answer, use the buttons on the question's card, or reply to its prompt (or to a card that asks for text) " +
	"with Reply; askbridge's console and API take answers too."

// inPrivate reports whether m is a person's message in their private chat
// with the bot: every such message may be told privateNote.
func inPrivate(m *tgbotapi.Message) bool {
	return m.Chat != nil && m.Chat.IsPrivate() && m.From != nil && !m.From.IsBot
}

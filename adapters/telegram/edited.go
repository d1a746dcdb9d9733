package telegram

import (
	"context"

	"github.com/askbridge/askbridge/core/card"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// A reply recorded as an answer stays the answer: a question closes once
// (law 2), and the agent may already have acted on it. Telegram lets its
// writer edit it afterwards all the same, and shows "edited"; so the
// writer is told, as a reply to it, that the answer stands as first
// written and the card shows it, as Slack and Teams tell theirs.
// Telegram sends no update when a message is deleted.

// onEdit takes m, the edited version of a reply to one of the bot's
// messages, and tells its writer that editing changes nothing when the
// reply was recorded as their answer to the part its ref names
// (answerNear). Anything else is left alone: a note must be true, and an
// edit of a reply that was never an answer is not the bridge's business.
func (a *Adapter) onEdit(ctx context.Context, m *tgbotapi.Message) {
	if m.From == nil || m.From.IsBot || m.Chat == nil || anonymous(m) {
		return
	}
	r, ok := replyRef(m.ReplyToMessage, a.bot.Self.ID)
	if !ok {
		return
	}
	q, err := a.svc.Get(ctx, r.QuestionID)
	if err != nil {
		a.logInternal(err, "get")
		return
	}
	if first, ok := partAnswer(q, r); ok && answerNear(m, first) {
		a.tell(m, card.EditedAnswerNote)
	}
}

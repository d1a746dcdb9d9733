package telegram

import (
	"context"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
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
// (recordedAnswer, answerNear): free text, or the arguments an "Edit and
// approve" approved. Anything else is left alone: a note must be true,
// and an edit of a reply that was never an answer is not the bridge's
// business. A question that could not be read while polling (again)
// is the store's failure: its error goes back (settle), and the edit is
// looked at again when the poller fetches it again.
func (a *Adapter) onEdit(ctx context.Context, m said) error {
	if m.From == nil || m.From.IsBot || m.Chat == nil || anonymous(m.Message) {
		return nil
	}
	r, ok := replyRef(m.ReplyToMessage, a.bot.Self.ID)
	if !ok {
		return nil
	}
	q, err := a.svc.Get(ctx, r.QuestionID)
	if a.again(ctx, err) {
		return err
	}
	if err != nil {
		a.logInternal(err, "get")
		return nil
	}
	if first, ok := recordedAnswer(q, r); ok && answerNear(m.Message, first) {
		a.tell(m, card.EditedAnswerNote)
	}
	return nil
}

// recordedAnswer is the answer q recorded for the part ref r names, when
// a reply gave it: a free-text answer (partAnswer), or the arguments an
// "Edit and approve" (core.RefEdit) approved, the approval's or, in a
// batch, its call's (r.Item). ok is false while that part has none.
func recordedAnswer(q *core.Question, r core.Ref) (core.ItemAnswer, bool) {
	if r.Action != core.RefEdit {
		return partAnswer(q, r)
	}
	switch res := q.Resolution; {
	case r.Item < 0 && res != nil && res.State == core.StateAnswered && res.Edit != nil:
		return core.ItemAnswer{Edit: res.Edit, Decider: res.Decider, At: res.At}, true
	case r.Item >= 0 && r.Item < len(q.Calls):
		if a, ok := q.Answered(q.Calls[r.Item].ToolCallID); ok && a.Edit != nil {
			return a, true
		}
	}
	return core.ItemAnswer{}, false
}

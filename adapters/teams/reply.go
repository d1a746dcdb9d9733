package teams

import (
	"context"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/formreply"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// onReply takes a reply in a card's thread (or in a reminder's, tied to
// the question as the card's is) as the answer of a clarification, or of
// the form item that was next when it was written. Anything else (a
// message elsewhere, a reply on a decision or an approval) changes
// nothing; a refused reply is told to the replier privately, and so is a
// message in a personal or group chat, which has no threads: it reaches
// the bot as an answer to nothing, and its writer would wait in vain. So
// is a reply to the bot in a thread tied to no question, and one from a
// sender askbridge cannot tell apart (anonymousNote).
func (a *Adapter) onReply(ctx context.Context, act *Activity) {
	files := sharesFiles(act)
	if act.Conversation == nil || strings.TrimSpace(act.Text) == "" && !files {
		return
	}
	// Each path below that acts (a note, an answer) checks for a repeat
	// (fresh) only once it is known to act: the rest is talk in the
	// bot's channels and chats, read and dropped unmarked.
	channel, root, ok := strings.Cut(act.Conversation.ID, ";messageid=")
	if !ok {
		if t := act.Conversation.ConversationType; (t == "personal" || t == "groupChat" && mentionsBot(act)) && a.fresh(ctx, act) {
			a.tell(ctx, act, notAnAnswer)
		}
		return
	}
	// A reply the store cannot tie to its question is told to try
	// again: Teams does not send it twice, and the card would never say.
	id, err := a.threadQuestion(ctx, channel, root)
	if err != nil {
		a.refuse(ctx, act, err)
		return
	}
	if id == "" {
		// A thread tied to no question. Whether its root is one of
		// ours the activity does not say; a reply that @mentions the
		// bot was meant for it (without consent to read every channel
		// message, only such a reply reaches the bot), and is told.
		if mentionsBot(act) && a.fresh(ctx, act) {
			a.tell(ctx, act, notTied)
		}
		return
	}
	q, err := a.svc.Get(ctx, id)
	if err != nil {
		a.refuse(ctx, act, err)
		return
	}
	if q.Kind != core.KindClarification && q.Kind != core.KindForm || !a.fresh(ctx, act) {
		return
	}
	d, ok := decider(act.From)
	if !ok {
		a.tell(ctx, act, anonymousNote)
		return
	}
	if files {
		a.refuse(ctx, act, card.RefuseNotText(ctx, a.svc, q, d))
		return
	}
	ref := core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefText}
	if q.Kind == core.KindForm {
		ref.Item = formreply.Item(q, d, sentAt(act))
	}
	in, err := core.AnswerFor(q, ref, d, replyText(act))
	if err == nil {
		if _, err = a.svc.Answer(ctx, in); err == nil {
			a.tieReply(ctx, q, act, d)
			return // the card's update is the confirmation
		}
	}
	a.refuse(ctx, act, err)
}

// threadQuestion is the question the thread rooted at root in channel
// is tied to, or "" for none. A tie written by an earlier version, by
// the root alone, counts only where the question records a card with
// that root in that channel: another channel's message may have the
// same id.
func (a *Adapter) threadQuestion(ctx context.Context, channel, root string) (core.QuestionID, error) {
	id, err := a.opts.KV.Value(ctx, threadKey(threadOf(channel, root)))
	if err != nil || id != "" {
		return core.QuestionID(id), err
	}
	if id, err = a.opts.KV.Value(ctx, legacyThreadKey(root)); err != nil || id == "" {
		return "", err
	}
	q, err := a.svc.Get(ctx, core.QuestionID(id))
	switch {
	case core.ErrorCode(err) == core.CodeNotFound:
		return "", nil
	case err != nil:
		return "", err
	}
	for _, m := range q.Messages {
		if m.Surface == core.SurfaceTeams && m.Room == channel && m.ID == root {
			return q.ID, nil
		}
	}
	return "", nil
}

// anonymousNote answers a click or reply from a sender Teams names no
// Microsoft Entra account for: nothing is recorded, as no person can be
// named as its decider.
const anonymousNote = "askbridge cannot tell who you are here: Teams sent no Microsoft Entra account with this " +
	"(as for an anonymous meeting participant), so it cannot be attributed to a person. Nothing was recorded. " +
	"To answer, sign in to Teams with your organisation's account and try again."

// notTied answers a reply to the bot in a thread tied to no question:
// its question is long closed, or the thread never held one.
const notTied = "This thread holds no question askbridge still takes replies for. Nothing was recorded."

// notAnAnswer tells who wrote in a personal or group chat how to answer.
const notAnAnswer = "A message in this chat is not recorded: answer with the boxes and buttons on the question's card, or in askbridge's console or API."

// replyHint is what a card that takes text says of replies: in a
// channel, that a reply in its thread answers it; in a personal or group
// chat, which has no threads, to answer on the card.
func replyHint(c card.Card, threaded bool) string {
	if !threaded {
		return "Answer with this card's boxes and buttons: a message sent in this chat is not recorded."
	}
	if c.Kind == core.KindForm {
		return "Or reply in this card's thread: a reply answers the first unanswered item."
	}
	return "Or reply in this card's thread: a reply answers the question."
}

// sharesFiles reports whether act carries a file or an image: any
// attachment but the text/html one Teams sends of a message's own text.
func sharesFiles(act *Activity) bool {
	for _, at := range act.Attachments {
		if !strings.HasPrefix(at.ContentType, "text/html") {
			return true
		}
	}
	return false
}

// refuse tells the sender of act privately why what they sent was not
// recorded, and logs a failure of askbridge's own.
func (a *Adapter) refuse(ctx context.Context, act *Activity, err error) {
	a.logInternal(err)
	a.tell(ctx, act, card.RefusalNote(err))
}

// mentionsBot reports whether act @mentions its recipient, the bot. In a
// group chat only such a message is meant for it: with consent to read
// every chat message, the bot also receives the members' talk among
// themselves, which gets no note.
func mentionsBot(act *Activity) bool {
	if act.Recipient == nil {
		return false
	}
	for _, e := range act.Entities {
		if e.Type == "mention" && e.Mentioned != nil && e.Mentioned.ID == act.Recipient.ID {
			return true
		}
	}
	return false
}

// replyText is a reply's words: Teams sends a channel message with the
// bot's mention first, which is not part of the answer and is taken
// out; anyone else the reply @mentions is part of it, and stays as
// "@Name".
func replyText(act *Activity) string {
	s := act.Text
	var others []Entity
	for _, e := range act.Entities {
		switch {
		case e.Type != "mention" || e.Text == "":
		case e.Mentioned != nil && act.Recipient != nil && e.Mentioned.ID == act.Recipient.ID:
			s = strings.ReplaceAll(s, e.Text, "")
		default:
			others = append(others, e)
		}
	}
	for _, e := range others {
		inner, open := strings.CutPrefix(e.Text, "<at>")
		name, closed := strings.CutSuffix(inner, "</at>")
		if !open || !closed || name == "" {
			continue // not an <at> tag: left as Teams sent it
		}
		s = strings.ReplaceAll(s, e.Text, "@"+name)
	}
	return strings.TrimSpace(s)
}

// sentAt is when Teams says act was sent, or zero if it does not say.
func sentAt(act *Activity) time.Time {
	t, err := time.Parse(time.RFC3339Nano, act.Timestamp)
	if err != nil {
		return time.Time{}
	}
	return t
}

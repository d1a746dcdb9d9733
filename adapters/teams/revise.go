package teams

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// A thread reply recorded as an answer stays the answer: a question
// closes once (law 2), and the agent may already have acted on it.
// Teams lets its writer edit or delete it afterwards all the same, and
// tells the bot (a messageUpdate of eventType editMessage, a
// messageDelete of softDeleteMessage); the writer is then told
// privately that the answer stands as first written and the card shows
// it, in card's words, as on Slack.

// replyKey ties the reply id in the thread conv that was recorded as an
// answer to its writer's AAD object id. Teams sends an edit or a
// deletion with the message's id and its new words alone, so the tie
// is what says the message was an answer, and whose.
func replyKey(conv, id string) string { return "teams:reply:" + conv + "#" + id }

// tieReply ties act, a reply recorded as d's answer to q, to d, for as
// long as q's thread is tied (tieFor). A tie that fails leaves an edit
// of the reply untold, which is logged.
func (a *Adapter) tieReply(ctx context.Context, q *core.Question, act *Activity, d core.Decider) {
	if act.ID == "" {
		return
	}
	if err := a.opts.KV.SetValueFor(ctx, replyKey(act.Conversation.ID, act.ID), d.ID, a.tieFor(q)); err != nil {
		a.log.Warn().Err(err).Str("question", string(q.ID)).Msg("teams: a recorded reply is not tied; an edit of it will not be told that the answer stands")
	}
}

// revisionNote is the note for act, an edit or a deletion of a message,
// should that message be a recorded answer; "" for any other activity
// of those types (an undelete, say).
func revisionNote(act *Activity) string {
	var data struct {
		EventType string `json:"eventType"`
	}
	_ = json.Unmarshal(act.ChannelData, &data) // absent or unreadable: no event named
	switch {
	case act.Type == "messageUpdate" && data.EventType == "editMessage":
		return card.EditedAnswerNote
	case act.Type == "messageDelete" && data.EventType == "softDeleteMessage":
		return card.DeletedAnswerNote
	}
	return ""
}

// onRevision tells the writer of a reply recorded as their answer, who
// edited or deleted it, that the answer stands. Any other message's
// edit or deletion is talk in the bot's channels and chats: read and
// dropped, unmarked. A deletion by someone else (a team's owner) is not
// told: its writer is not who Teams names, and a note must be true. A
// copy of the same edit (same message, same time) is told once; its
// claim is confirmed once the handling ends (inHand), and a copy that
// comes while it is in hand is answered 503, as every activity's is.
func (a *Adapter) onRevision(ctx context.Context, act *Activity) {
	note := revisionNote(act)
	if note == "" || act.ID == "" || act.Conversation == nil || act.From == nil || act.From.AADObjectID == "" {
		return
	}
	writer, err := a.opts.KV.Value(ctx, replyKey(act.Conversation.ID, act.ID))
	if err != nil || !strings.EqualFold(writer, act.From.AADObjectID) {
		return // not a recorded answer's, or not its writer's: nothing true to tell
	}
	if !a.claim(ctx, "teams:activity:"+seenKey(act)+":"+act.Type+"@"+act.Timestamp) {
		return
	}
	a.tell(ctx, act, note)
}

package slack

import (
	"context"
	"strings"
	"time"

	"github.com/slack-go/slack/slackevents"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// A reply recorded as an answer stays the answer: a question closes once
// (law 2), and the agent may already have acted on it. Slack lets its
// writer edit or delete it afterwards all the same, and then shows
// "(edited)", or nothing; so the writer is told privately that the answer
// stands as first written and the card shows it.

// revision is an edit or a deletion of a person's reply in a thread,
// reduced to what the adapter reads from it: the reply's words before the
// change (as onReply reads them), when it was written, and whether it had
// been edited before (its first words then unknown).
type revision struct {
	user, channel, threadTS, was string
	written                      time.Time
	editedBefore, deleted        bool
}

// revisionOf turns a message_changed or message_deleted event into a
// revision of a person's thread reply. An edit that keeps the words is
// none: Slack sends message_changed itself when it unfurls a link or tags
// a language. Replies under someone else's message are left alone, as in
// replyOf.
func (a *Adapter) revisionOf(ev *slackevents.MessageEvent) (revision, bool) {
	if ev == nil || ev.PreviousMessage == nil {
		return revision{}, false
	}
	prev := ev.PreviousMessage
	was := strings.TrimSpace(typed(prev.Text))
	r := revision{user: prev.User, channel: ev.Channel, threadTS: prev.ThreadTimestamp, was: was,
		written: tsTime(prev.Timestamp), editedBefore: prev.Edited != nil}
	switch ev.SubType {
	case "message_changed":
		if ev.Message == nil || strings.TrimSpace(typed(ev.Message.Text)) == was {
			return revision{}, false
		}
	case "message_deleted":
		r.deleted = true
	default:
		return revision{}, false
	}
	if r.user == "" || prev.BotID != "" || a.isMe(r.user) || was == "" ||
		r.threadTS == "" || r.threadTS == prev.Timestamp || a.notOurs(prev.ParentUserId) {
		return revision{}, false
	}
	return r, true
}

// onRevision returns the note for a revision of a reply in a card's
// thread that was recorded as its writer's answer, or "" when it was not
// (or that cannot be told just now: a note must be true).
func (a *Adapter) onRevision(ctx context.Context, r revision) string {
	info, err := a.cardQuestion(ctx, r.channel, r.threadTS)
	if err != nil || info.id == "" {
		return ""
	}
	q, err := a.svc.Get(ctx, info.id)
	if err != nil || !info.ours && !hasCard(q, r.channel, r.threadTS) || !answeredBy(q, r) {
		return ""
	}
	if r.deleted {
		return card.DeletedAnswerNote
	}
	return card.EditedAnswerNote
}

// clockSkew is how far Slack's clock (a reply's ts) may run ahead of
// ours (when its answer was recorded).
const clockSkew = 5 * time.Second

// answeredBy reports whether r's reply is the answer q recorded from its
// writer in free text: its words before the change are that answer's, or,
// edited before (its first words unknown), it was written by the time
// that answer was recorded. The latter may take another reply of theirs
// written just before or with it for the answer; the note is true of it
// all the same (editing it changes no answer), and a later reply is
// never taken.
func answeredBy(q *core.Question, r revision) bool {
	seen := func(d core.Decider, text string, at time.Time) bool {
		return d.Surface == core.SurfaceSlack && d.ID == r.user && text != "" &&
			(text == r.was || r.editedBefore && !r.written.IsZero() && !r.written.After(at.Add(clockSkew)))
	}
	if res := q.Resolution; res != nil && q.Kind == core.KindClarification && seen(res.Decider, res.Answer, res.At) {
		return true
	}
	for _, a := range q.Answers {
		if a.OptionID == "" && seen(a.Decider, a.Text, a.At) {
			return true
		}
	}
	for _, v := range q.Votes {
		if seen(v.Decider, v.Text, v.At) {
			return true
		}
	}
	return false
}

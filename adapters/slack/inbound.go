package slack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/formreply"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// click is a button press, reduced to what the adapter reads from it.
type click struct {
	user, userName string
	team           string // the user's own workspace (user.team_id)
	channel        string
	messageTS      string
	value          string // the button's value: an encoded core.Ref, or junk
	trigger        string // lets the adapter open a modal for this click
}

// clickOf turns an interaction payload into a click; anything but a button
// press on a message is not one.
func clickOf(ic slack.InteractionCallback) (click, bool) {
	if ic.Type != slack.InteractionTypeBlockActions || len(ic.ActionCallback.BlockActions) == 0 {
		return click{}, false
	}
	act := ic.ActionCallback.BlockActions[0]
	if act == nil || act.Type != "button" && act.Type != "" {
		return click{}, false
	}
	c := click{user: ic.User.ID, userName: ic.User.Name, team: ic.User.TeamID, channel: ic.Channel.ID,
		messageTS: ic.Container.MessageTs, value: act.Value, trigger: ic.TriggerID}
	if c.channel == "" {
		c.channel = ic.Container.ChannelID
	}
	if c.messageTS == "" {
		c.messageTS = ic.Message.Timestamp
	}
	if c.user == "" {
		return click{}, false
	}
	return c, true
}

// reply is a thread reply, reduced to what the adapter reads from it;
// files is set when it shared any (it is then refused: card.ErrNotText).
type reply struct {
	user, channel, ts, threadTS, text string
	team                              string // the replier's own workspace (user_team)
	files                             bool
}

// replyOf turns a message event into a reply when it is a person's
// message in a thread, words or files; our own posts, other bots, edits,
// deletions, top-level messages and replies under someone else's message
// (notOurs) are not.
func (a *Adapter) replyOf(ev *slackevents.MessageEvent) (reply, bool) {
	if !a.fromPerson(ev) || !inThread(ev) {
		return reply{}, false
	}
	if ev.Message != nil && a.notOurs(ev.Message.ParentUserId) {
		// Under someone else's message: no card's thread (cards and
		// reminders are our bot's posts), so no read of its root.
		return reply{}, false
	}
	files := ev.SubType == "file_share" || ev.Message != nil && len(ev.Message.Files) > 0
	text := strings.TrimSpace(typed(ev.Text))
	if text == "" && !files {
		return reply{}, false
	}
	return reply{user: ev.User, channel: ev.Channel, ts: ev.TimeStamp, threadTS: ev.ThreadTimeStamp, text: text, team: ev.UserTeam, files: files}, true
}

// notInThread answers a person's message in their DM with the bot that
// is in no thread: only a reply in a card's thread (or a button on it)
// answers, and in a DM, where every message is meant for the bot, one
// written beside the card would otherwise pass for an answer.
const notInThread = "A message in this chat is not recorded: answer on the question's card, with its buttons " +
	"or by a reply in its thread (Reply in thread), or in askbridge's console or API."

// dmMessageOf reports whether ev is a person's message in their DM with
// the bot outside the thread of any message of the bot's (notInThread):
// on its own, or in a thread under one of their own messages. It says
// whose.
func (a *Adapter) dmMessageOf(ev *slackevents.MessageEvent) (user string, ok bool) {
	if !a.fromPerson(ev) || ev.ChannelType != slackevents.ChannelTypeIM {
		return "", false
	}
	if inThread(ev) && (ev.Message == nil || !a.notOurs(ev.Message.ParentUserId)) {
		return "", false // a reply under a message of ours: replyOf's
	}
	return ev.User, true
}

// fromPerson reports whether ev is a person's new message, words or
// files: not our own post, another bot's, an edit or a deletion.
func (a *Adapter) fromPerson(ev *slackevents.MessageEvent) bool {
	if ev == nil || ev.BotID != "" || ev.User == "" || a.isMe(ev.User) {
		return false
	}
	return ev.SubType == "" || ev.SubType == "thread_broadcast" || ev.SubType == "file_share"
}

// inThread reports whether ev is a reply in a thread, not its root nor a
// message of its own.
func inThread(ev *slackevents.MessageEvent) bool {
	return ev.ThreadTimeStamp != "" && ev.ThreadTimeStamp != ev.TimeStamp
}

// notOurs reports whether parent, the author of a thread's root as
// Slack names it (parent_user_id), is someone other than our bot. Telling
// so from the event spares reading the root (cardQuestion): a thread
// under a person's message costs no conversations.replies call (Tier 3,
// and far scarcer for apps outside the Marketplace), and when that read
// fails, the people chatting in it are sent no "try again" note about a
// question they never answered. Unknown (no parent named, or auth.test
// not answered yet) is not "not ours": the root is read as before.
func (a *Adapter) notOurs(parent string) bool {
	me := a.botUser.Load()
	return parent != "" && me != nil && *me != "" && parent != *me
}

// onClick hands a click to core and returns the private note the clicker
// gets: what was recorded, or the truth about why nothing was.
func (a *Adapter) onClick(ctx context.Context, c click) string {
	ref, err := core.DecodeRef(c.value)
	if err != nil {
		return card.RefusalNote(err)
	}
	q, err := a.svc.Get(ctx, ref.QuestionID)
	if err != nil {
		return a.refusal(err)
	}
	d, err := a.decider(ctx, q, c.user, c.team, c.userName)
	if err != nil {
		return a.refusal(err)
	}
	var out core.Outcome
	switch ref.Action {
	case core.RefDecline:
		out, err = a.svc.Decline(ctx, q.ID, d)
	case core.RefText:
		return "To answer in your own words, reply in this card's thread."
	case core.RefEdit:
		return a.openEdit(ctx, q, ref, d, c)
	default:
		var in core.AnswerInput
		if in, err = core.AnswerFor(q, ref, d, ""); err == nil {
			out, err = a.svc.Answer(ctx, in)
		}
	}
	if err != nil {
		return a.refusal(err)
	}
	return card.RecordedNote(out.Question, ref)
}

// onReply hands a thread reply on a card (or on a reminder standing for
// it) to core: the answer of a clarification, or the free-text answer of
// the form item that was next when the reply was written. A reply in any
// other thread, or on a decision or approval, changes nothing. It returns
// the private note for the replier: what counted, or why nothing did (""
// for a reply that was not an answer at all); and, with the note of a
// refusal by core, the error behind it, which onEvent weighs: the
// store's failure (core.HandleAgain) is left to Slack's retry of the
// event rather than told, when one is to come. A failure of Slack's own
// (a thread or a user it would not read just then) is told at once.
func (a *Adapter) onReply(ctx context.Context, r reply) (string, error) {
	info, err := a.cardQuestion(ctx, r.channel, r.threadTS)
	if err != nil {
		// Whether the thread is a card's is unknown, and Slack is not
		// to be asked again and again for what it refused just now:
		// its writer is asked to reply again.
		a.log.Error().Err(err).Msg("answer not recorded: its thread could not be read")
		return card.RefusalNote(core.Internal("slack thread", err)), nil
	}
	id := info.id
	if id == "" {
		a.log.Debug().Str("channel", r.channel).Msg("thread reply ignored: the thread is not a card")
		return "", nil
	}
	q, err := a.svc.Get(ctx, id)
	if err != nil && core.ErrorCode(err) != core.CodeNotFound {
		return a.refusal(err), err
	}
	if err != nil || !info.ours && !hasCard(q, r.channel, r.threadTS) {
		// Neither posted by us nor recorded as a card: a look-alike.
		a.log.Debug().Err(err).Str("question", string(id)).Msg("thread reply ignored: no such card recorded")
		return "", nil
	}
	if q.Kind != core.KindClarification && q.Kind != core.KindForm {
		a.log.Debug().Str("question", string(id)).Msg("thread reply ignored: the question takes no free text")
		return "", nil
	}
	d, err := a.decider(ctx, q, r.user, r.team, "")
	if err != nil {
		return a.refusal(err), nil // Slack's failure, told as the thread's
	}
	if r.files {
		err := card.RefuseNotText(ctx, a.svc, q, d)
		return a.refusal(err), err
	}
	ref := core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefText}
	if q.Kind == core.KindForm {
		ref.Item = formreply.Item(q, d, tsTime(r.ts))
	}
	in, err := core.AnswerFor(q, ref, d, r.text)
	if err == nil {
		var out core.Outcome
		if out, err = a.svc.Answer(ctx, in); err == nil {
			return card.RecordedNote(out.Question, ref), nil
		}
	}
	// Refused replies get the same note as refused clicks, someone who
	// may not answer included (core recorded the refusal either way).
	return a.refusal(err), err
}

// refusal is the private note for an attempt that changed nothing; our
// own failures are logged (without the person or their text).
func (a *Adapter) refusal(err error) string {
	if core.ErrorCode(err) == core.CodeInternal {
		a.log.Error().Err(err).Msg("answer not recorded")
	}
	return card.RefusalNote(err)
}

// tsTime is when a message was posted, as its ts ("<seconds>.<micro>")
// says, or zero for a ts that is not one.
func tsTime(ts string) time.Time {
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || s <= 0 {
		return time.Time{}
	}
	us, err := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	if err != nil {
		us = 0
	}
	return time.Unix(s, us*1000)
}

// hasCard reports whether q recorded a Slack card at channel and ts.
func hasCard(q *core.Question, channel, ts string) bool {
	for _, m := range q.Messages {
		if m.Surface == core.SurfaceSlack && m.Room == channel && m.ID == ts {
			return true
		}
	}
	return false
}

// cardQuestion finds the question whose card is the root of a thread, by
// reading the root message (conversations.replies) and the question id
// it carries; ours is set when the root was posted by our bot. A
// reminder of ours posted where its card is not stands for the card: a
// reply to it was meant for the question it names. Answers are
// cached, not-a-card included, so a busy thread costs one read; a read
// that fails is an error, and nothing is cached.
func (a *Adapter) cardQuestion(ctx context.Context, channel, threadTS string) (cardInfo, error) {
	key := cardKey(channel, threadTS)
	if c, ok := a.cards.get(key); ok {
		return c, nil
	}
	msgs, _, _, err := a.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
		ChannelID: channel, Timestamp: threadTS, Limit: 1, Inclusive: true,
	})
	if err != nil {
		return cardInfo{}, fmt.Errorf("reading a thread's root message: %w", err)
	}
	var c cardInfo
	if len(msgs) > 0 && msgs[0].Timestamp == threadTS {
		root := msgs[0]
		c.id, _ = QuestionOfCard(root.Blocks)
		if c.id == "" && root.BotID != "" && a.botID.Load() == nil {
			if id, _ := QuestionOfReminder(root.Blocks); id != "" {
				// A bot's reminder, ours or a look-alike: which is not
				// known until auth.test answers (askWhoAmI). Nothing is
				// cached, and the reply's writer is asked to send it again.
				return cardInfo{}, errors.New("a thread's root is a reminder, and whether it is ours is unknown: auth.test has not answered yet")
			}
		}
		if c.id == "" && a.isOurBot(root.BotID) {
			c.id, _ = QuestionOfReminder(root.Blocks)
		}
		c.ours = c.id != "" && a.isOurBot(root.BotID)
	}
	a.cards.put(key, c)
	return c, nil
}

// decider maps a Slack user to core's decider: their id, display name,
// and the user groups they are in among those the question's routes name
// (role:S…). Core decides whether that is enough. When a group could not
// be read and core would let the user in were they in it (and not
// without), whether they may is unknown: that is an error to try again
// after, not a refusal that core would record and the user would be
// told as the truth. A group that could not change core's answer (one of
// a route core does not ask yet) holds up no refusal. A user of another
// workspace (team, their own, is not ours) is marked an outsider
// (outsider), whom core lets in only where the routes name them: "*"
// means our own members.
func (a *Adapter) decider(ctx context.Context, q *core.Question, user, team, payloadName string) (core.Decider, error) {
	roles, unread := a.roles(ctx, q, user)
	d := core.Decider{Surface: core.SurfaceSlack, ID: user, Name: a.name(ctx, user, payloadName), Roles: roles}
	outsider, err := a.outsider(ctx, q, d, team, unread)
	if err != nil {
		return d, err
	}
	d.Outsider = outsider
	if unread.err != nil && !a.svc.MayAnswer(q, d) && a.svc.MayAnswer(q, unread.in(d)) {
		return d, core.Internal("slack user groups", unread.err)
	}
	return d, nil
}

// unreadGroups are the user groups Slack would not list just then, and
// why (err is nil when it listed every one).
type unreadGroups struct {
	groups []string
	err    error
}

// in is d as a member of every unread group. Asked of d so, core says
// whether those groups could change its answer for d: which routes, and
// so which groups, count for a question now is core's to say, not ours.
func (u unreadGroups) in(d core.Decider) core.Decider {
	d.Roles = append(slices.Clone(d.Roles), u.groups...)
	return d
}

// roles are the user groups, among those the routes deciding the
// question now name as role:<id> (core's RolesToCheck), that user is in,
// and those that could not be read (left out: the check fails closed).
func (a *Adapter) roles(ctx context.Context, q *core.Question, user string) ([]string, unreadGroups) {
	groups := a.svc.RolesToCheck(q, core.SurfaceSlack)
	var roles []string
	var unread unreadGroups
	for _, g := range groups {
		members, ok := a.members.get(g)
		if !ok {
			var err error
			members, err = a.api.GetUserGroupMembersContext(ctx, g)
			if err != nil {
				a.log.Warn().Err(err).Str("group", g).Msg("could not read a user group's members")
				unread.groups = append(unread.groups, g)
				unread.err = errors.Join(unread.err, fmt.Errorf("reading user group %s: %w", g, err))
				continue
			}
			a.members.put(g, members)
		}
		for _, m := range members {
			if m == user {
				roles = append(roles, g)
				break
			}
		}
	}
	return roles, unread
}

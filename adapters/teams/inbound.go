package teams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/apierror"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// maxActivity bounds an inbound activity's body.
const maxActivity = 1 << 20

// readyWait is how long an activity that arrives before the signing keys
// are fetched waits for them, well under the Bot Connector's 15 s.
const readyWait = 5 * time.Second

// Mount implements core.ChatAdapter: the messaging endpoint.
func (a *Adapter) Mount(mux *http.ServeMux) {
	mux.HandleFunc("POST "+MessagesPath, a.serveActivity)
}

// serveActivity authenticates one activity and acts on it. Anything not
// proven to come from the Bot Connector for this bot is a 401 and is not
// read further.
func (a *Adapter) serveActivity(w http.ResponseWriter, r *http.Request) {
	if !a.awaitKeys(r.Context()) {
		http.Error(w, "starting", http.StatusServiceUnavailable)
		return
	}
	// The token is checked before the body is read: a caller without one
	// gets nothing parsed.
	tok, err := a.auth.verify(r)
	if err != nil {
		a.refused(w, err)
		return
	}
	body, ok := apierror.ReadBody(w, r, maxActivity)
	if !ok {
		return
	}
	var act Activity
	if err := json.Unmarshal(body, &act); err != nil {
		http.Error(w, "not an activity", http.StatusBadRequest)
		return
	}
	if err := a.auth.admits(tok, act.ServiceURL, act.ChannelID); err != nil {
		a.refused(w, err)
		return
	}
	if err := a.ours(&act); err != nil {
		a.refused(w, err)
		return
	}
	// Detached from the request: an answer the Bot Connector hangs up on
	// is still stored whole, as Slack's, Telegram's and Discord's are.
	// What the handling claimed (firstSeen) is confirmed once it ends.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), handleBudget)
	defer cancel()
	ctx, claims := handling(ctx)
	defer claims.done(ctx)
	if act.Type == "messageUpdate" || act.Type == "messageDelete" {
		a.onRevision(ctx, &act) // an edit or a deletion of a message
		claims.answer(w)
		return
	}
	execute := act.Type == "invoke" && act.Name == "adaptiveCard/action"
	if !execute && act.Type != "message" {
		w.WriteHeader(http.StatusOK) // nothing askbridge acts on
		return
	}
	// A click always acts, so it is checked for a repeat at once; a
	// message is checked only once it turns out to be one that may act
	// (onReply), as most are the talk in the bot's channels and chats.
	// A copy that another handling has in hand is answered 503 (notYet).
	if (execute || len(act.Value) > 0) && !a.firstSeen(ctx, &act) {
		if claims.held {
			notYet(w)
			return
		}
		a.repeated(ctx, w, &act)
		return
	}
	switch {
	case execute:
		note := a.onExecute(ctx, &act)
		a.keepNote(ctx, &act, note)
		invokeNote(w, note)
		return
	case len(act.Value) > 0:
		a.onSubmit(ctx, &act)
	default:
		a.onReply(ctx, &act)
	}
	claims.answer(w)
}

// ours checks that a genuine activity is Teams' and from the bot's
// tenant. The Bot Framework signs every channel's activities with keys
// endorsed for several channels, and in Web Chat or Direct Line the
// client sets its own from, so an activity from another channel, or
// from another tenant where the bot is installed, would answer as
// whoever it names.
func (a *Adapter) ours(act *Activity) error {
	if act.ChannelID != channelTeams {
		return fmt.Errorf("teams: an activity from channel %q", act.ChannelID)
	}
	var data struct {
		Tenant struct {
			ID string `json:"id"`
		} `json:"tenant"`
	}
	_ = json.Unmarshal(act.ChannelData, &data) // absent or unreadable: no tenant there
	var conv string
	if act.Conversation != nil {
		conv = act.Conversation.TenantID
	}
	if conv == "" && data.Tenant.ID == "" {
		return errors.New("teams: an activity that names no tenant")
	}
	if conv != "" && !strings.EqualFold(conv, a.opts.TenantID) {
		return fmt.Errorf("teams: an activity from tenant %q", conv)
	}
	if t := data.Tenant.ID; t != "" && !strings.EqualFold(t, a.opts.TenantID) {
		return fmt.Errorf("teams: an activity from tenant %q", t)
	}
	return nil
}

// channelTeams is Teams' channel id on the Bot Framework.
const channelTeams = "msteams"

func (a *Adapter) awaitKeys(ctx context.Context) bool {
	t := time.NewTimer(readyWait)
	defer t.Stop()
	select {
	case <-a.auth.ready:
		return true
	case <-ctx.Done():
	case <-t.C:
	}
	return false
}

// decider is who acted, as core knows people: their AAD object id. A
// sender Teams names no AAD object id for (an anonymous meeting
// participant, who has no Microsoft Entra identity) is no one askbridge
// can tell apart: ok is false, and they are told so (anonymousNote).
func decider(from *Account) (core.Decider, bool) {
	if from == nil || from.AADObjectID == "" {
		return core.Decider{}, false
	}
	return core.Decider{Surface: core.SurfaceTeams, ID: from.AADObjectID, Name: from.Name}, true
}

// actionData is what a card action sends back: its ref, the id of its
// input, and every input's value (Adaptive Cards merge them into data).
func actionData(raw json.RawMessage) (ref, text string, ok bool) {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return "", "", false
	}
	ref, _ = m[DataRef].(string)
	if in, _ := m[DataInput].(string); in != "" {
		text, _ = m[in].(string)
	}
	return ref, text, ref != ""
}

// onExecute takes an Action.Execute click and returns the note shown to
// the clicker alone.
func (a *Adapter) onExecute(ctx context.Context, act *Activity) string {
	var v InvokeValue
	if json.Unmarshal(act.Value, &v) != nil || v.Action.Verb != Verb {
		return card.RefusalNote(core.ErrNotFound)
	}
	ref, text, ok := actionData(v.Action.Data)
	if !ok {
		return card.RefusalNote(core.ErrNotFound)
	}
	return a.click(ctx, act, ref, text)
}

// onSubmit takes an Action.Submit click (a client without universal
// actions) and tells the clicker in their personal chat with the bot, as
// a channel has no message for one person alone.
func (a *Adapter) onSubmit(ctx context.Context, act *Activity) {
	ref, text, ok := actionData(act.Value)
	if !ok {
		return
	}
	note := a.click(ctx, act, ref, text)
	a.tell(ctx, act, note)
}

// tell sends note to the person who sent act: into the same chat when it
// is their personal chat, else into a personal chat with them. Each call
// Teams throttles is waited out and made again (unthrottled), as a note
// is no outbox delivery, which would be retried: dropped, it left its
// reader (a click refused, a reply not recorded) with no word at all.
func (a *Adapter) tell(ctx context.Context, act *Activity, note string) {
	if note == "" || act.From == nil {
		return
	}
	msg := &Activity{Type: "message", Text: cut(note, 1000), TextFormat: "plain"}
	conv := ""
	if act.Conversation != nil && act.Conversation.ConversationType == "personal" {
		conv = act.Conversation.ID
	} else {
		err := a.unthrottled(ctx, func() error {
			res, err := a.conn.createConversation(ctx, ConversationParameters{
				Bot: &Account{ID: "28:" + a.opts.AppID}, Members: []Account{{ID: act.From.ID}}, TenantID: a.opts.TenantID,
			})
			conv = res.ID
			return err
		})
		if err != nil {
			a.log.Warn().Err(err).Msg("teams: private note not sent")
			return
		}
	}
	if err := a.unthrottled(ctx, func() error { _, err := a.conn.send(ctx, conv, msg); return err }); err != nil {
		a.log.Warn().Err(err).Msg("teams: private note not sent")
	}
}

// A note is sent while the Bot Connector waits for the activity that
// caused it to be answered (15 s), so a throttled note waits at most
// noteWait at a time, noteTries times in all; one Teams holds back
// longer is dropped and logged.
const (
	noteTries = 3
	noteWait  = 5 * time.Second
)

// unthrottled makes call, and makes it again after each 429 (a
// core.RetryAfter, its wait the connector's: throttle) within the
// bounds above, until it is not throttled or ctx ends.
func (a *Adapter) unthrottled(ctx context.Context, call func() error) error {
	for try := 1; ; try++ {
		err := call()
		ra, throttled := errors.AsType[*core.RetryAfter](err)
		if !throttled || try == noteTries || ra.After > noteWait || !a.sleep(ctx, ra.After) {
			return err
		}
	}
}

// click turns a card action of act into a call to core, and returns what
// to tell the clicker.
func (a *Adapter) click(ctx context.Context, act *Activity, raw, text string) string {
	r, err := core.DecodeRef(raw)
	if err != nil {
		return card.RefusalNote(err)
	}
	d, ok := decider(act.From)
	if !ok {
		return anonymousNote
	}
	q, err := a.svc.Get(ctx, r.QuestionID)
	if err != nil {
		a.logInternal(err)
		return card.RefusalNote(err)
	}
	switch mine, err := a.fromCard(ctx, q, act); {
	case err != nil:
		a.logInternal(err)
		return card.RefusalNote(err)
	case !mine:
		// Nothing reaches core: this is no attempt at this question.
		return card.NotOnCardNote
	}
	var out core.Outcome
	if r.Action == core.RefDecline {
		out, err = a.svc.Decline(ctx, q.ID, d)
	} else {
		if r.Action == core.RefEdit && (!q.Open() || !a.svc.MayAnswer(q, d)) {
			// Refused before the arguments are looked at, and recorded.
			return card.RefusalNote(a.svc.Refusal(ctx, q, d))
		}
		var in core.AnswerInput
		if in, err = core.AnswerFor(q, r, d, text); err != nil {
			return card.RefusalNote(err)
		}
		out, err = a.svc.Answer(ctx, in)
	}
	if err != nil {
		a.logInternal(err)
		return card.RefusalNote(err)
	}
	return card.RecordedNote(out.Question, r)
}

// fromCard reports whether act, an action on a card, came from one of
// q's cards in the conversation it was posted to. Teams merges an
// action's data client side, so any client can send any card's data from
// any message; only the message it names (replyToId) and its
// conversation come from Teams. A card is known by q's record of it
// (onCard), or, until that record lands (the outbox makes it once Teams
// has taken the card, and a record that failed leaves that copy
// unrecorded for good), by the tie Post left for it (cardKey).
func (a *Adapter) fromCard(ctx context.Context, q *core.Question, act *Activity) (bool, error) {
	if onCard(q, act) {
		return true, nil
	}
	if act.ReplyToID == "" || act.Conversation == nil {
		return false, nil
	}
	id, err := a.opts.KV.Value(ctx, cardKey(act.Conversation.ID, act.ReplyToID))
	if err != nil {
		return false, core.Internal("teams card", err)
	}
	return id == string(q.ID), nil
}

// onCard reports whether act came from one of the cards q records. A
// card in a channel is its thread's root; one in a person's direct
// messages is in their personal chat; one in a chat is in that chat.
func onCard(q *core.Question, act *Activity) bool {
	if act.ReplyToID == "" || act.Conversation == nil {
		return false
	}
	conv, root, threaded := strings.Cut(act.Conversation.ID, ";messageid=")
	for _, m := range q.Messages {
		if m.Surface != core.SurfaceTeams || m.ID != act.ReplyToID {
			continue
		}
		if user, dm := core.DMUser(m.Room); dm {
			if act.Conversation.ConversationType == "personal" && act.From != nil &&
				(strings.EqualFold(act.From.AADObjectID, user) || act.From.ID == user) {
				return true
			}
			continue
		}
		if conv == m.Room && (!threaded || root == m.ID) {
			return true
		}
	}
	return false
}

func (a *Adapter) logInternal(err error) {
	var ce *core.ClosedError
	if core.ErrorCode(err) == core.CodeInternal && !errors.As(err, &ce) {
		a.log.Error().Err(err).Msg("teams: core failed")
	}
}

package slack

import (
	"context"
	"slices"
	"strings"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/slack-go/slack"
)

// Post puts q's card in room (a channel id; a user id, or core's DM room
// of one, opens a DM, whose D… id Slack returns and the card is recorded
// under).
func (a *Adapter) Post(ctx context.Context, q *core.Question, ref core.MessageRef) (core.MessageRef, error) {
	m := Card(card.New(q, ref))
	ch, ts, err := a.api.PostMessageContext(ctx, slackRoom(ref.Room), slack.MsgOptionText(m.Text, false), slack.MsgOptionBlocks(m.Blocks...))
	if err != nil {
		return core.MessageRef{}, deliveryErr("chat.postMessage", err)
	}
	a.cards.put(cardKey(ch, ts), cardInfo{id: q.ID, ours: true})
	ref.Room, ref.ID = ch, ts
	return ref, nil
}

// Update edits a card to show q as it stands. The blocks are always sent:
// chat.update keeps blocks it is not given, so a text-only edit would
// leave the buttons clickable.
func (a *Adapter) Update(ctx context.Context, q *core.Question, ref core.MessageRef) error {
	m := Card(card.New(q, ref))
	_, _, _, err := a.api.UpdateMessageContext(ctx, ref.Room, ref.ID, slack.MsgOptionText(m.Text, false), slack.MsgOptionBlocks(m.Blocks...))
	if err != nil {
		return deliveryErr("chat.update", err)
	}
	return nil
}

// Remind posts a reminder in the thread of q's card in room (broadcast to
// the channel, so it is seen), or, with no card there, as a message of its
// own.
func (a *Adapter) Remind(ctx context.Context, q *core.Question, room string) error {
	c := card.Reminder(a.svc, q, core.SurfaceSlack, room)
	if c.ReplyTo == nil {
		c.ReplyTo = a.dmCard(q, room)
	}
	m := Reminder(c)
	opts := []slack.MsgOption{slack.MsgOptionText(m.Text, false), slack.MsgOptionBlocks(m.Blocks...)}
	target := slackRoom(room)
	if card := c.ReplyTo; card != nil {
		target = card.Room
		opts = append(opts, slack.MsgOptionTS(card.ID), slack.MsgOptionBroadcast())
	}
	if _, _, err := a.api.PostMessageContext(ctx, target, opts...); err != nil {
		return deliveryErr("chat.postMessage", err)
	}
	return nil
}

// Digest posts a "while you were away" summary in room.
func (a *Adapter) Digest(ctx context.Context, d core.Digest, room string) error {
	m := Digest(d)
	if _, _, err := a.api.PostMessageContext(ctx, slackRoom(room), slack.MsgOptionText(m.Text, false), slack.MsgOptionBlocks(m.Blocks...)); err != nil {
		return deliveryErr("chat.postMessage", err)
	}
	return nil
}

// slackRoom is where chat.postMessage posts for a delivery's room: a
// person's DM room is their user id, which Slack opens as the DM.
func slackRoom(room string) string {
	if user, ok := core.DMUser(room); ok {
		return user
	}
	return room
}

// dmCard is, for a reminder into a person's DM room ("@U…"), q's card in
// that DM: Post records it under the D… channel Slack opened, which the
// room does not name, so it is found by its delivery instead. Core keys a
// person's DM delivery "<question>:<purpose>:dm:<person>"; the card is
// theirs if that person's Slack id is the room's user. nil if there is
// none (the reminder then stands alone).
func (a *Adapter) dmCard(q *core.Question, room string) *core.MessageRef {
	user, ok := core.DMUser(room)
	if !ok || a.svc == nil {
		return nil
	}
	var out *core.MessageRef
	for i := range q.Messages {
		m := q.Messages[i]
		if m.Surface != core.SurfaceSlack || !strings.HasPrefix(m.Room, "D") {
			continue
		}
		_, name, ok := strings.Cut(m.Delivery, ":dm:")
		if !ok {
			continue
		}
		p, ok := a.svc.Person(name)
		if ok && slices.Contains(p.IDs[core.SurfaceSlack], user) {
			out = &m // the latest, as card.NewReminder takes
		}
	}
	return out
}

package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/bwmarrin/discordgo"

	"github.com/askbridge/askbridge/core"
)

// The courier's REST calls take discordgo's bucket for their route
// themselves (takeRoute) rather than through the SDK's helpers
// (ChannelMessageSendComplex and the like). When a route has no requests
// left (a 429, or the last answer's X-RateLimit-Remaining of 0), the
// SDK's limiter sleeps until the route's reset before it sends
// (LockBucketObject's time.Sleep), and no context ends that sleep: a
// delivery's worker, and a stopping drain that waits for it, sat out
// the whole reset, half a minute or more after a route's 429, and then
// sent. Here the wait is handed back instead, as a core.RetryAfter with
// nothing sent, so the outbox keeps the delivery until the reset, as it
// does after the 429 itself, and other rooms go on meanwhile. It is
// marked core.Unspent: no request went out, so the drain gives back the
// shared budgets' sends it spent for it (Budgets), which Discord never
// counted.

// errRouteWait is why a request was not sent: its route, or the bot as a
// whole, has no requests left until a reset Discord announced.
var errRouteWait = errors.New("discord: not sent while its route has no requests left")

// takeRoute takes the session's bucket for a route, as discordgo's
// LockBucket does, but returns a core.RetryAfter for the wait instead of
// sleeping it out. Only requests of this adapter hold these buckets, and
// none of them sleeps holding one, so the lock waits no longer than a
// request of the same route in flight (the DM opening's route is every
// person's room's), which a stop ends with the same context. The bucket
// is released by the request made with it (RequestWithLockedBucket).
func (a *Adapter) takeRoute(ctx context.Context, bucketID string) (*discordgo.Bucket, error) {
	rl := a.s.Ratelimiter
	b := rl.GetBucket(bucketID)
	b.Lock()
	if wait := rl.GetWaitTime(b, 1); wait > 0 {
		b.Unlock()
		return nil, &core.RetryAfter{After: wait, Err: &core.Unspent{Err: errRouteWait}}
	}
	if err := ctx.Err(); err != nil {
		b.Unlock()
		return nil, &core.NotSent{Err: err}
	}
	b.Remaining--
	return b, nil
}

// rest makes one REST call of the courier: data (JSON) to endpoint on
// the route bucketID names, Discord's answer decoded into out (nil: not
// wanted). Its ctx carries the call's pushback (watch). It takes its
// token of the courier's rate (tokenBucket) first, and gives it back if
// the route's wait is handed back: a request not sent spends none.
func (a *Adapter) rest(ctx context.Context, method, endpoint, bucketID string, data, out any) error {
	body, err := discordgo.Marshal(data)
	if err != nil {
		return err
	}
	if err := a.bucket.wait(ctx); err != nil {
		return err
	}
	b, err := a.takeRoute(ctx, bucketID)
	if err != nil {
		a.bucket.giveBack()
		return err
	}
	resp, err := a.s.RequestWithLockedBucket(method, endpoint, "application/json", body, b, 0, discordgo.WithContext(ctx))
	if err != nil || out == nil {
		return err
	}
	if err := discordgo.Unmarshal(resp, out); err != nil {
		return fmt.Errorf("%w: %s", discordgo.ErrJSONUnmarshal, err)
	}
	return nil
}

// sendMessage posts m into a channel (the SDK's ChannelMessageSendComplex,
// whose embeds and files askbridge never sends).
func (a *Adapter) sendMessage(ctx context.Context, channel string, m *discordgo.MessageSend) (*discordgo.Message, error) {
	endpoint := discordgo.EndpointChannelMessages(channel)
	var out discordgo.Message
	if err := a.rest(ctx, http.MethodPost, endpoint, endpoint, m, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// editMessage edits a message (ChannelMessageEditComplex), on the
// route of its channel's edits, as the SDK keys it.
func (a *Adapter) editMessage(ctx context.Context, m *discordgo.MessageEdit) error {
	return a.rest(ctx, http.MethodPatch, discordgo.EndpointChannelMessage(m.Channel, m.ID), discordgo.EndpointChannelMessage(m.Channel, ""), m, nil)
}

// openDM opens (or finds) the DM channel with a user (UserChannelCreate).
func (a *Adapter) openDM(ctx context.Context, user string) (*discordgo.Channel, error) {
	data := struct {
		RecipientID string `json:"recipient_id"`
	}{user}
	var out discordgo.Channel
	if err := a.rest(ctx, http.MethodPost, discordgo.EndpointUserChannels("@me"), discordgo.EndpointUserChannels(""), data, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

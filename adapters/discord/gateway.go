package discord

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/askbridge/askbridge/adapters/internal/inhand"
	"github.com/askbridge/askbridge/core/loops"
)

// The gateway connection is askbridge's to keep, not discordgo's: the
// SDK's own reconnect loop (off, see New) runs on after Close, so a
// replica that had stopped or lost the gateway lease opened a session
// again as soon as Discord answered, and it waits up to ten minutes
// between tries, so clicks failed for minutes after Discord was back.
const (
	// gatewayMinWait and gatewayMaxWait bound the wait between tries to
	// connect: doubling from the one, at most the other.
	gatewayMinWait = time.Second
	gatewayMaxWait = time.Minute
	// gatewayQuick is how often a lost connection is opened again at
	// once; a second loss within it waits as a failed try does, so a
	// session Discord ends as soon as it opens is not reopened in a
	// tight loop.
	gatewayQuick = time.Minute
)

// errRefused is Run's error when Discord refuses the gateway for good:
// the bot token (a 401, or the gateway's close 4004), or a close Discord
// says never to reconnect after (noReconnect). Trying again cannot
// help, and the bridge should not run half-configured, its clicks never
// arriving (as Telegram's Run ends for a token Telegram refuses).
var errRefused = errors.New("discord: Discord refused the gateway connection")

// noReconnect are the gateway's close codes after which Discord's
// documentation says not to reconnect, and what each means.
var noReconnect = map[int]string{
	4004: "the bot token is wrong, or was reset",
	4010: "an invalid shard",
	4011: "the bot is in too many servers to connect without sharding",
	4012: "an API version Discord no longer serves",
	4013: "invalid intents",
	4014: "intents the application is not allowed",
}

// refused is Run's error for err, an error opening the gateway, when it
// is a refusal for good (errRefused); nil when trying again may help.
func refused(err error) error {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		if what, ok := noReconnect[ce.Code]; ok {
			return fmt.Errorf("%w: the gateway closed with %d (%s): %s", errRefused, ce.Code, ce.Text, what)
		}
	}
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("%w: the bot token was refused (%s)", errRefused, re.Response.Status)
	}
	return nil
}

// Run receives interactions over the gateway until ctx ends, on this
// replica while it holds the gateway lease (when Options.Leases is set).
// Without the gateway it only waits: clicks then come through the HTTP
// endpoint. It ends early, with an errRefused, when Discord refuses the
// gateway for good.
func (a *Adapter) Run(ctx context.Context) error {
	if !a.opts.Gateway {
		<-ctx.Done()
		return nil
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	connect := func(ctx context.Context) {
		if err := a.connect(ctx); err != nil {
			stop(err)
		}
	}
	// Run returns once the interactions it took in hand are answered
	// (deferred last, so it waits after the handler is gone): discordgo
	// runs each handler on a goroutine of its own, which nothing else
	// waits for, and once Run has returned its caller closes the store.
	var inHand inhand.Group
	defer inHand.Close()
	remove := a.s.AddHandler(func(s *discordgo.Session, ic *discordgo.InteractionCreate) {
		if !inHand.Add() {
			return // Run has returned
		}
		defer inHand.Done()
		a.onGateway(ctx, ic)
	})
	defer remove()
	removeDrop := a.s.AddHandler(func(*discordgo.Session, *discordgo.Disconnect) {
		select {
		case a.dropped <- struct{}{}:
		default:
		}
	})
	defer removeDrop()
	if a.opts.Leases == nil {
		connect(ctx)
		return refusal(ctx)
	}
	key := a.gatewayKey()
	loops.Leader{Leases: a.opts.Leases, Key: key, Owner: a.opts.Owner, TTL: a.opts.LeaseTTL,
		OnChange: func(held bool) {
			if held {
				a.log.Info().Msg("discord: this replica holds the gateway")
			} else {
				a.log.Info().Msg("discord: this replica no longer holds the gateway")
			}
		},
		OnError: func(err error) {
			a.log.Error().Err(err).Str("lease", key).
				Msg("discord: the gateway lease's store is failing; this replica holds no gateway until it answers")
		},
		OnRecover: func(failed int, down time.Duration) {
			a.log.Info().Str("lease", key).Int("failed_calls", failed).Dur("down", down).
				Msg("discord: the gateway lease's store answers again")
		},
	}.Run(ctx, connect)
	return refusal(ctx)
}

// refusal is the errRefused that ended ctx, Run's, if one did.
func refusal(ctx context.Context) error {
	if err := context.Cause(ctx); errors.Is(err, errRefused) {
		return err
	}
	return nil
}

// gatewayKey names the gateway lease of this bot: by application id when
// configured, else by a hash of the token (never the token itself).
func (a *Adapter) gatewayKey() string {
	if a.opts.AppID != "" {
		return "discord:" + a.opts.AppID + ":gateway"
	}
	sum := sha256.Sum256([]byte(a.opts.Token))
	return "discord:" + hex.EncodeToString(sum[:6]) + ":gateway"
}

// connect holds a gateway connection until ctx ends, then closes it, and
// tries nothing more. A connection that fails is tried again, waiting
// longer each time up to gatewayMaxWait; one that is lost (a network
// failure, missed heartbeats, Discord's op 7) is opened again, and
// resumed, as discordgo keeps the session: at once, or after a wait when
// it was lost once already within gatewayQuick. One Discord refuses for
// good (refused) is not tried again: that refusal is its error.
func (a *Adapter) connect(ctx context.Context) error {
	wait := gatewayMinWait
	var quick time.Time // when a lost connection was last opened again at once
	for {
		select { // a loss before this try is no news
		case <-a.dropped:
		default:
		}
		if err := a.s.Open(); err != nil && !errors.Is(err, discordgo.ErrWSAlreadyOpen) {
			if err := refused(err); err != nil {
				return err
			}
			a.log.Warn().Err(err).Dur("retry_in", wait).Msg("discord: gateway connection failed")
		} else {
			a.log.Info().Msg("discord: gateway connected")
			select {
			case <-ctx.Done():
				if err := a.s.Close(); err != nil {
					a.log.Debug().Err(err).Msg("discord: gateway close")
				}
				return nil
			case <-a.dropped:
			}
			if now := time.Now(); now.Sub(quick) >= gatewayQuick {
				quick, wait = now, gatewayMinWait
				a.log.Warn().Msg("discord: gateway connection lost; connecting again")
				continue
			}
			a.log.Warn().Dur("retry_in", wait).Msg("discord: gateway connection lost again")
		}
		if !a.sleep(ctx, wait) {
			return nil
		}
		wait = min(2*wait, gatewayMaxWait)
	}
}

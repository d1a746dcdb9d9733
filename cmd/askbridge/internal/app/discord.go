package app

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/discord"
	"github.com/askbridge/askbridge/core"
)

func init() { chatAdapters = append(chatAdapters, openDiscord) }

// openDiscord turns the Discord adapter on when DISCORD_BOT_TOKEN is set
// (see DiscordSettings; LoadSettings has checked them).
func openDiscord(_ context.Context, s Settings, svc *core.Service, _ core.Budget, log zerolog.Logger) (chatAdapter, error) {
	c := s.Discord
	if c.BotToken == "" {
		return nil, nil
	}
	opts := discord.Options{
		Token:     c.BotToken.Reveal(),
		AppID:     c.AppID,
		APIURL:    c.APIURL,
		PublicKey: c.publicKey,
		Gateway:   c.gatewayOn,
		Log:       log.With().Str("surface", string(core.SurfaceDiscord)).Logger(),
	}
	if c.gatewayOn {
		// One replica at a time holds the gateway (every connection gets
		// every click); the others take over within seconds of its end.
		opts.Leases, opts.Owner = svc.Values(), s.ReplicaID
	}
	a, err := discord.New(svc, opts)
	if err != nil {
		return nil, fmt.Errorf("DISCORD_BOT_TOKEN: %w", err)
	}
	return a, nil
}

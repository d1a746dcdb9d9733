package app

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/telegram"
	"github.com/askbridge/askbridge/core"
)

func init() { chatAdapters = append(chatAdapters, openTelegram) }

// openTelegram turns the Telegram adapter on when TELEGRAM_BOT_TOKEN is set
// (see TelegramSettings; LoadSettings has checked them). In polling mode
// the offset and the lease that lets one replica alone poll are kept in
// the store's values. Opening makes no call to Telegram: the adapter's Run
// asks who the bot is, and keeps trying while Telegram cannot be reached.
func openTelegram(_ context.Context, s Settings, svc *core.Service, budget core.Budget, log zerolog.Logger) (chatAdapter, error) {
	c := s.Telegram
	if c.BotToken == "" {
		return nil, nil
	}
	opts := telegram.Options{
		Token:         c.BotToken.Reveal(),
		APIEndpoint:   c.APIURL,
		WebhookSecret: c.WebhookSecret.Reveal(),
		WebhookURL:    c.WebhookURL,
		Budget:        budget, // its reply prompts and notes spend the shared budgets too
		Log:           log.With().Str("surface", "telegram").Logger(),
	}
	if opts.WebhookSecret == "" {
		opts.KV, opts.Owner = svc.Values(), s.ReplicaID
	}
	a, err := telegram.New(svc, opts)
	if err != nil {
		return nil, fmt.Errorf("TELEGRAM_BOT_TOKEN: %w", err)
	}
	return a, nil
}

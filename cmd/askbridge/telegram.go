package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/askbridge/askbridge/adapters/telegram"
	"github.com/askbridge/askbridge/core"
	"github.com/rs/zerolog"
)

func init() { chatAdapters = append(chatAdapters, openTelegram) }

// openTelegram turns the Telegram adapter on when TELEGRAM_BOT_TOKEN is
// set. TELEGRAM_WEBHOOK_SECRET selects webhook mode (with
// TELEGRAM_WEBHOOK_URL, the public URL Telegram POSTs to); without it the
// adapter long-polls, one replica at a time, keeping its offset and lease
// in the store. TELEGRAM_API_URL points it at another Bot API server
// (tgbotapi's endpoint format, "…/bot%s/%s").
func openTelegram(ctx context.Context, s Settings, svc *core.Service, log zerolog.Logger) (chatAdapter, error) {
	token := Secret(s.env("TELEGRAM_BOT_TOKEN"))
	if token == "" {
		return nil, nil
	}
	if !strings.Contains(token.Reveal(), ":") {
		return nil, errors.New("TELEGRAM_BOT_TOKEN: not a bot token (<bot id>:<secret>, from @BotFather)")
	}
	opts := telegram.Options{
		Token:         token.Reveal(),
		APIEndpoint:   s.env("TELEGRAM_API_URL"),
		WebhookSecret: s.env("TELEGRAM_WEBHOOK_SECRET"),
		WebhookURL:    s.env("TELEGRAM_WEBHOOK_URL"),
		Log:           log.With().Str("surface", "telegram").Logger(),
	}
	if e := opts.APIEndpoint; e != "" && strings.Count(e, "%s") != 2 {
		return nil, errors.New("TELEGRAM_API_URL: must hold two %s, for the token and the method (https://api.telegram.org/bot%s/%s)")
	}
	if opts.WebhookSecret != "" {
		u, err := url.Parse(opts.WebhookURL)
		if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
			return nil, errors.New("TELEGRAM_WEBHOOK_URL: webhook mode (TELEGRAM_WEBHOOK_SECRET is set) needs the public URL of " + telegram.WebhookPath)
		}
		if len(opts.WebhookSecret) > 256 || strings.Trim(opts.WebhookSecret, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") != "" {
			return nil, errors.New("TELEGRAM_WEBHOOK_SECRET: 1-256 characters of A-Z, a-z, 0-9, _ and -")
		}
	} else {
		opts.KV = svc.Store() // every store keeps core.Values
		host, _ := os.Hostname()
		var b [4]byte
		_, _ = rand.Read(b[:])
		opts.Owner = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	a, err := telegram.New(ctx, svc, opts)
	if err != nil {
		return nil, fmt.Errorf("TELEGRAM_BOT_TOKEN: %w", err)
	}
	return a, nil
}

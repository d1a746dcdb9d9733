package main

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"

	"github.com/askbridge/askbridge/adapters/discord"
	"github.com/askbridge/askbridge/core"
	"github.com/rs/zerolog"
)

func init() { chatAdapters = append(chatAdapters, openDiscord) }

// openDiscord turns the Discord adapter on when DISCORD_BOT_TOKEN is set.
//
//	DISCORD_BOT_TOKEN   the bot token (on = adapter on)
//	DISCORD_APP_ID      the application id; interactions for another app are refused
//	DISCORD_PUBLIC_KEY  hex Ed25519 key: mounts POST /discord/interactions
//	DISCORD_API_URL     REST base, default https://discord.com/api/v10/
//	DISCORD_GATEWAY     on (default) or off: off takes clicks only over HTTP
func openDiscord(ctx context.Context, s Settings, svc *core.Service, log zerolog.Logger) (chatAdapter, error) {
	token := Secret(strings.TrimSpace(s.env("DISCORD_BOT_TOKEN")))
	if token == "" {
		return nil, nil
	}
	o := discord.Options{
		Token:  token.Reveal(),
		AppID:  strings.TrimSpace(s.env("DISCORD_APP_ID")),
		APIURL: strings.TrimSpace(s.env("DISCORD_API_URL")),
		Log:    log.With().Str("surface", string(core.SurfaceDiscord)).Logger(),
	}
	if o.AppID != "" && strings.Trim(o.AppID, "0123456789") != "" {
		return nil, fmt.Errorf("DISCORD_APP_ID: %q is not a Discord id (a number)", o.AppID)
	}
	if o.APIURL != "" {
		u, err := url.Parse(o.APIURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("DISCORD_API_URL: %q is not an http(s) URL", o.APIURL)
		}
	}
	if pk := strings.TrimSpace(s.env("DISCORD_PUBLIC_KEY")); pk != "" {
		key, err := hex.DecodeString(pk)
		if err != nil || len(key) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("DISCORD_PUBLIC_KEY: not a hex Ed25519 public key (%d hex characters, from the app's General Information page)", 2*ed25519.PublicKeySize)
		}
		o.PublicKey = key
	}
	switch g := strings.ToLower(strings.TrimSpace(s.env("DISCORD_GATEWAY"))); g {
	case "", "on", "true", "1", "yes":
		o.Gateway = true
	case "off", "false", "0", "no":
		if o.PublicKey == nil {
			return nil, fmt.Errorf("DISCORD_GATEWAY: off leaves no way to receive clicks unless DISCORD_PUBLIC_KEY is set for the HTTP endpoint")
		}
	default:
		return nil, fmt.Errorf("DISCORD_GATEWAY: %q is not on or off", g)
	}
	a, err := discord.New(svc, o)
	if err != nil {
		return nil, fmt.Errorf("DISCORD_BOT_TOKEN: %w", err)
	}
	return a, nil
}

package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/core"
	"github.com/rs/zerolog"
)

func init() { chatAdapters = append(chatAdapters, openSlack) }

// openSlack turns the Slack adapter on when SLACK_BOT_TOKEN is set. It
// takes clicks and replies over Socket Mode (SLACK_APP_TOKEN), over HTTP
// (SLACK_SIGNING_SECRET, at /slack/events and /slack/interactivity), or
// both; one of them is required.
func openSlack(_ context.Context, s Settings, svc *core.Service, log zerolog.Logger) (chatAdapter, error) {
	bot := Secret(strings.TrimSpace(s.env("SLACK_BOT_TOKEN")))
	if bot == "" {
		return nil, nil
	}
	app := Secret(strings.TrimSpace(s.env("SLACK_APP_TOKEN")))
	secret := Secret(strings.TrimSpace(s.env("SLACK_SIGNING_SECRET")))
	if app == "" && secret == "" {
		return nil, fmt.Errorf("SLACK_APP_TOKEN or SLACK_SIGNING_SECRET: one is required with SLACK_BOT_TOKEN " +
			"(an app-level token for Socket Mode, or the signing secret for the HTTP endpoints)")
	}
	if app != "" && !strings.HasPrefix(app.Reveal(), "xapp-") {
		return nil, fmt.Errorf("SLACK_APP_TOKEN: an app-level token starts with xapp-")
	}
	api := strings.TrimSpace(s.env("SLACK_API_URL"))
	if api != "" {
		u, err := url.Parse(api)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("SLACK_API_URL: %q is not an http(s) URL", api)
		}
		if !strings.HasSuffix(api, "/") {
			api += "/" // the SDK appends method names to it
		}
	}
	a, err := slack.New(svc, slack.Options{
		BotToken:      bot.Reveal(),
		AppToken:      app.Reveal(),
		SigningSecret: secret.Reveal(),
		APIURL:        api,
		Log:           log,
	})
	if err != nil {
		return nil, fmt.Errorf("SLACK_BOT_TOKEN: %w", err)
	}
	return a, nil
}

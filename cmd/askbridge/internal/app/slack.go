package app

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/core"
)

func init() { chatAdapters = append(chatAdapters, openSlack) }

// openSlack turns the Slack adapter on when SLACK_BOT_TOKEN is set (see
// SlackSettings; LoadSettings has checked them).
func openSlack(_ context.Context, s Settings, svc *core.Service, _ core.Budget, log zerolog.Logger) (chatAdapter, error) {
	c := s.Slack
	if c.BotToken == "" {
		return nil, nil
	}
	a, err := slack.New(svc, slack.Options{
		BotToken:      c.BotToken.Reveal(),
		AppToken:      c.AppToken.Reveal(),
		SigningSecret: c.SigningSecret.Reveal(),
		APIURL:        c.APIURL,
		Log:           log,
	})
	if err != nil {
		return nil, fmt.Errorf("SLACK_BOT_TOKEN: %w", err)
	}
	return a, nil
}

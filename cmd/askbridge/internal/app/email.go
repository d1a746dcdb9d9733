package app

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/core"
)

func init() { chatAdapters = append(chatAdapters, openEmail) }

// openEmail turns the email door on when EMAIL_SMTP_HOST is set (see
// EmailSettings; LoadSettings has checked them). Its links are signed
// with the server's key, so every replica sharing ASKBRIDGE_ACTOR_KEY
// takes every replica's links. Opening does not connect to the relay.
func openEmail(_ context.Context, s Settings, svc *core.Service, _ core.Budget, log zerolog.Logger) (chatAdapter, error) {
	c := s.Email
	if c.Host == "" {
		return nil, nil
	}
	a, err := email.New(svc, email.Options{
		Host: c.Host, Port: c.port, TLS: c.TLS, Username: c.Username, Password: c.Password.Reveal(),
		From: c.From, HELO: c.HELO, PublicURL: s.PublicURL, Key: []byte(s.ActorKey.Reveal()), Now: clockNow(s.Clock),
		Log: log.With().Str("surface", "email").Logger(),
	})
	if err != nil {
		return nil, fmt.Errorf("EMAIL_SMTP_HOST: %w", err)
	}
	return a, nil
}

// clockNow is c's Now, or nil (the wall clock) without one.
func clockNow(c core.Clock) func() time.Time {
	if c == nil {
		return nil
	}
	return c.Now
}

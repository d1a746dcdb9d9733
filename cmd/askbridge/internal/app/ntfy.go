package app

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/ntfy"
	"github.com/askbridge/askbridge/core"
)

func init() { chatAdapters = append(chatAdapters, openNtfy) }

// openNtfy turns the ntfy door on when NTFY_URL is set (see NtfySettings;
// LoadSettings has checked them). Its buttons are signed with the
// server's key, as the email door's links are. Opening makes no call to
// ntfy.
func openNtfy(_ context.Context, s Settings, svc *core.Service, _ core.Budget, log zerolog.Logger) (chatAdapter, error) {
	c := s.Ntfy
	if c.URL == "" {
		return nil, nil
	}
	a, err := ntfy.New(svc, ntfy.Options{
		ServerURL: c.URL, Token: c.Token.Reveal(), TokenOverHTTP: c.tokenOverHTTP, PublicURL: s.PublicURL, Key: []byte(s.ActorKey.Reveal()),
		Now: clockNow(s.Clock), Log: log.With().Str("surface", "ntfy").Logger(),
	})
	if err != nil {
		return nil, fmt.Errorf("NTFY_URL: %w", err)
	}
	return a, nil
}

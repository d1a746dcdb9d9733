package app

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/teams"
	"github.com/askbridge/askbridge/core"
)

func init() { chatAdapters = append(chatAdapters, openTeams) }

// openTeams turns the Teams adapter on when TEAMS_APP_ID is set (see
// TeamsSettings; LoadSettings has checked them). A channel thread's root
// is tied to its question in the store's values, so a reply on any
// replica finds it. Opening makes no call to Microsoft: Run fetches the
// signing keys, and the first send the app token.
func openTeams(_ context.Context, s Settings, svc *core.Service, _ core.Budget, log zerolog.Logger) (chatAdapter, error) {
	c := s.Teams
	if c.AppID == "" {
		return nil, nil
	}
	a, err := teams.New(svc, teams.Options{
		AppID: c.AppID, AppPassword: c.AppPassword.Reveal(), TenantID: c.TenantID,
		ServiceURL: c.ServiceURL, TokenURL: c.TokenURL, OpenIDURL: c.OpenIDURL,
		KV: svc.Values(), Log: log.With().Str("surface", "teams").Logger(),
	})
	if err != nil {
		return nil, fmt.Errorf("TEAMS_APP_ID: %w", err)
	}
	return a, nil
}

package discord

import (
	"testing"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

// The Discord side of the shared scenarios: the real program with the
// Discord adapter on (HTTP interactions, gateway off) against a local fake
// of Discord driven by the real discordgo SDK.
// It runs on both stores.
func TestDiscordScenarios(t *testing.T) {
	t.Parallel() // mostly waits on Discord's send budgets: each backend waits alongside the other
	for _, b := range apptest.Backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			adaptertest.Run(t, &apptest.DiscordDriver{Backend: b})
		})
	}
}

package chat

import (
	"testing"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

// TestSlackScenarios runs the shared end-to-end scenarios against the real
// program with its Slack adapter on, talking to a local fake of Slack.
// Clicks and replies arrive the way Slack sends them over HTTP: signed
// Interactivity and Events API requests built from real payloads.
func TestSlackScenarios(t *testing.T) {
	t.Parallel() // mostly waits on the room's send budget
	adaptertest.Run(t, &apptest.SlackDriver{})
}

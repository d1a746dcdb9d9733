package chat

import (
	"os"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

// TestMain lets a test run this binary as the program (the Slack preview
// runs `askbridge hook` as a child, as an agent host does); see
// apptest.AsProgram.
func TestMain(m *testing.M) {
	if os.Getenv(apptest.AsProgram) == "1" {
		app.Exit()
		return
	}
	os.Exit(m.Run())
}

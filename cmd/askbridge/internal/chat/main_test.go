package chat

import (
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

// TestMain lets a test run this binary as the program (the Slack preview
// runs `askbridge hook` as a child, as an agent host does).
func TestMain(m *testing.M) { apptest.Main(m) }

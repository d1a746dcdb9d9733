package app_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

// TestCLIQuestionsJSONWithNoneOpen: "questions --json" with nothing open
// prints an empty array, which a script can iterate over. Before, it
// printed null.
func TestCLIQuestionsJSONWithNoneOpen(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	code, out, errb := runAll(t.Context(), cliEnv(m), "", "questions", "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want []", code, out, errb)
	}
}

package app_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

// TestCLIAskRecommendNeedsOptions: --recommend without --option (a
// clarification, or a form, whose recommendation is a * in --item) is a
// usage error naming the *, and nothing is asked. Before, the flag was
// dropped without a word and the question parked with no recommendation.
func TestCLIAskRecommendNeedsOptions(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	env := cliEnv(m)
	for _, extra := range [][]string{
		{"--item", "Which region?|eu-west-1|us-east-1", "--recommend", "eu-west-1"},
		{"--recommend", "yes"},
	} {
		code, out, errb := runAll(t.Context(), env, "", append([]string{"ask", "--no-wait", "--reversibility", "reversible", "--question", "Go?"}, extra...)...)
		if code != app.ExitUsage || !strings.Contains(errb, "with * in --item") {
			t.Errorf("ask %v: exit %d, stdout %q, stderr %q; want a usage error pointing at *", extra, code, out, errb)
		}
	}
	if l, err := client.New(m.URL, m.AdminToken).List(t.Context(), "", 10); err != nil || len(l.Questions) != 0 {
		t.Errorf("open questions %+v, %v; want none asked", l, err)
	}
	// A decision's --recommend still picks its option.
	code, out, errb := runAll(t.Context(), env, "", "ask", "--no-wait", "--reversibility", "reversible", "--question", "Go?",
		"--option", "a|A|x", "--option", "b|B|y", "--recommend", "b")
	if code != 0 {
		t.Fatalf("a decision with --recommend: exit %d, stdout %q, stderr %q", code, out, errb)
	}
}

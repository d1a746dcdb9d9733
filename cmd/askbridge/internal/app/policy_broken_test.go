package app_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
)

// brokenYAML has a rule that cannot be evaluated for a call without a
// "mode" argument, before a deny that matches one; route front sends
// Bash calls to it.
const brokenYAML = `
routes:
  g:
    deciders: {api: ["*"]}
    rules:
      - name: mode
        when: tool == "Bash" && args.mode == "safe"
        decide: allow
      - name: no-rm
        when: tool == "Bash" && args.command.contains("rm -rf")
        decide: deny
  front:
    deciders: {api: ["*"]}
    rules:
      - name: to g
        when: tool == "Bash"
        route: g
`

// TestPolicyTestNamesABrokenRuleADenyPassed: when a rule cannot be
// evaluated and a later deny decides all the same, policy test names the
// broken rule beside the deny, as the asked event does: the person
// trying rules learns that one of theirs fails on this call and that
// the deny decided only because it came later. Before, it printed the
// deny alone, as if the rules had run cleanly. So for a call of a batch,
// and for a deny on the route an ask rule sent the call to.
func TestPolicyTestNamesABrokenRuleADenyPassed(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "askbridge.yaml")
	if err := os.WriteFile(cfg, []byte(brokenYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string { return map[string]string{"ASKBRIDGE_CONFIG": cfg}[k] }
	const (
		head   = `{"kind":"approval","question":"q","reversibility":"reversible","run_id":"r",`
		rm     = `"tool":"Bash","arguments":{"command":"rm -rf ~"}`
		broken = "routes.g.rules[0].when: no such key: mode"
		deny   = `policy rule 1 of route "g" ("no-rm") denies it at once, nobody is asked`
	)
	for name, stdin := range map[string]string{
		"one call":       head + `"route":"g",` + rm + `}`,
		"sent on":        head + `"route":"front",` + rm + `}`,
		"call of batch":  head + `"route":"g","calls":[{"tool_call_id":"b1",` + rm + `}]}`,
		"sent on, batch": head + `"route":"front","calls":[{"tool_call_id":"b1",` + rm + `}]}`,
	} {
		var out, errb bytes.Buffer
		if code := app.Run(t.Context(), []string{"policy", "test"}, env, strings.NewReader(stdin), &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errb.String())
		}
		if got := out.String(); !strings.Contains(got, broken) || !strings.Contains(got, deny) {
			t.Errorf("%s: policy test printed %q; want the broken rule (%s) named beside the deny", name, got, broken)
		}
	}
}

package app_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
)

// TestPolicyTestReadsTheAskAsTheServerDoes: policy test refuses an ask the
// server refuses: a key spelled in another case, a key given twice (in the
// ask or in its arguments), text that is not UTF-8, and a second value
// after the ask. Before, it matched keys in any case, kept the last of two
// and read the first value alone, so it printed a verdict for an ask the
// server would never evaluate ("tool":"Read" then "tool":"WebFetch" was
// denied here; the server refuses it).
func TestPolicyTestReadsTheAskAsTheServerDoes(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "askbridge.yaml")
	if err := os.WriteFile(cfg, []byte(policyYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string { return map[string]string{"ASKBRIDGE_CONFIG": cfg}[k] }
	const head = `{"kind":"approval","question":"q","reversibility":"reversible","run_id":"r","route":"claude-code",`
	for _, c := range []struct{ stdin, want string }{
		{`{"Kind":"approval","question":"q","reversibility":"reversible","run_id":"r","route":"claude-code","tool":"WebFetch","arguments":{}}`, `Kind`},
		{head + `"Tool":"WebFetch","arguments":{}}`, `Tool`},
		{head + `"tool":"Read","tool":"WebFetch","arguments":{}}`, `"tool"`},
		{head + `"tool":"WebFetch","arguments":{"url":"a","url":"b"}}`, `"url"`},
		{head + "\"tool\":\"WebFetch\",\"arguments\":{\"url\":\"\xff\"}}", `UTF-8`},
		{head + `"tool":"WebFetch","arguments":{}} {"kind":"clarification"}`, `after top-level value`},
	} {
		var out, errb bytes.Buffer
		code := app.Run(t.Context(), []string{"policy", "test"}, env, strings.NewReader(c.stdin), &out, &errb)
		if code != app.ExitError || out.Len() != 0 || !strings.Contains(errb.String(), c.want) ||
			!strings.Contains(errb.String(), "not an ask request") {
			t.Errorf("%s: exit %d, printed %q, error %q; want it refused, naming %s", c.stdin, code, out.String(), errb.String(), c.want)
		}
	}
}

package app_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
)

// TestConfigCheckRefusesAnEmptyFileAsAReloadDoes: config check refuses a
// file that holds nothing (empty, comments alone, or those and a ---) in
// the words of the reload that would refuse it once rolled out, and
// exits 1. Before, it said "ok: ... 0 routes" to a file every running
// replica then refused.
func TestConfigCheckRefusesAnEmptyFileAsAReloadDoes(t *testing.T) {
	r := startBehindLink(t, nil, reloadYAML("ops-one", ""))
	path := r.m.Settings.ConfigPath
	env := func(k string) string {
		return map[string]string{"ASKBRIDGE_CONFIG": path, "ASKBRIDGE_DATA_DIR": t.TempDir()}[k]
	}
	for _, nothing := range []string{"", "\n  \n", "# askbridge's configuration file.\n", "# askbridge's configuration file.\n---\n"} {
		r.rewrite(t, nothing)
		d := r.digest(t, r.m.AdminToken)
		if d.Refused == nil {
			t.Fatalf("%q: the reload applied it: %+v", nothing, d)
		}
		var out, errb bytes.Buffer
		code := app.Run(t.Context(), []string{"config", "check"}, env, nil, &out, &errb)
		if said := strings.TrimSpace(errb.String()); code != app.ExitError || out.Len() != 0 || said != "askbridge: "+d.Refused.Error {
			t.Errorf("%q: config check: exit %d, stdout %q, stderr %q; want exit %d and the reload's refusal %q",
				nothing, code, out.String(), errb.String(), app.ExitError, d.Refused.Error)
		}
		// Put the good file back, so that the next reading is refused anew.
		r.rewrite(t, reloadYAML("ops-one", ""))
	}

	// A file that spells out a configuration of nothing is written on
	// purpose: a reload takes it, and so does the check.
	digest := r.rewrite(t, "null\n")
	if d := r.digest(t, r.m.AdminToken); d.Digest != digest || d.Refused != nil {
		t.Fatalf("null: the reload did not apply it: %+v", d)
	}
	var out, errb bytes.Buffer
	if code := app.Run(t.Context(), []string{"config", "check"}, env, nil, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "ok:") {
		t.Errorf("null: config check: exit %d, stdout %q, stderr %q; want ok", code, out.String(), errb.String())
	}
}

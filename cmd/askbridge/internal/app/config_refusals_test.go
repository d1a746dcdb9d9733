package app_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
)

// TestParseFileRefusesWhatServeRefuses: a file the check passes is one
// serve runs. Before, a retention under an hour, a downtime threshold
// under 30s and a rule's quorum outside its route's passed the file's
// check and were refused by core alone, in words that named neither the
// file nor the key ("core: the retention (30m0s) must be at least
// 1h0m0s"): at start, at every reload and by policy test.
func TestParseFileRefusesWhatServeRefuses(t *testing.T) {
	none := func(string) string { return "" }
	for _, c := range []struct{ name, yaml, want string }{
		{"a retention under an hour", "policies: {retention: 30m}", "policies.retention: must be at least 1h"},
		{"a downtime threshold under two heartbeats", "policies: {downtime_threshold: 10s}", "policies.downtime_threshold: must be at least 30s"},
		{"a rule's quorum its route does not allow", "routes: {a: {deciders: {api: ['*']}, rules: [{when: 'true', quorum: 3}]}}",
			"routes.a.rules[0].quorum: 3 is outside what route \"a\" allows"},
	} {
		if _, err := app.ParseFile([]byte(c.yaml), none); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error starting %q", c.name, err, c.want)
		}
	}

	// serve's own reading names the file, then the key.
	path := filepath.Join(t.TempDir(), "askbridge.yaml")
	if err := os.WriteFile(path, []byte("policies: {retention: 30m}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ASKBRIDGE_CONFIG": path, "ASKBRIDGE_DATA_DIR": t.TempDir()}
	if _, err := app.LoadSettings(func(k string) string { return env[k] }); err == nil || !strings.HasPrefix(err.Error(), path+": policies.retention") {
		t.Fatalf("LoadSettings: %v; want it to name %s and policies.retention", err, path)
	}
}

// TestReloadRefusalNamesTheFileAndKey: a reload refused for what core
// refuses says which file and which key, as one refused for any other
// fault does. Before, its reason was core's words alone.
func TestReloadRefusalNamesTheFileAndKey(t *testing.T) {
	r := startBehindLink(t, nil, reloadYAML("ops-one", ""))
	r.rewrite(t, reloadYAML("ops-two", "policies: {retention: 30m}\n"))
	d := r.digest(t, r.m.AdminToken)
	want := r.m.Settings.ConfigPath + ": policies.retention: must be at least 1h"
	if d.Refused == nil || !strings.HasPrefix(d.Refused.Error, want) {
		t.Fatalf("digest endpoint says %+v; want the refusal to start %q", d, want)
	}
}

// TestFileErrorsShowNoSecret: the YAML decoder's own errors quote what
// it read: the first 7 characters of a value of the wrong type (all of
// one of 10 or fewer), and the whole of a key it does not know, which
// is where a token written without its "token:" lands. Those errors go
// to the log, the event log (read by observers) and the digest endpoint.
// They name the line instead; a misspelt key, spelt as the file's keys
// are, is still named.
func TestFileErrorsShowNoSecret(t *testing.T) {
	none := func(string) string { return "" }
	for _, c := range []struct{ name, yaml, secret, want string }{
		{"an ntfy topic given as a string", "routes:\n  a:\n    ntfy: dave-approvals-7f3k\n", "dave-ap", "line 3: cannot unmarshal !!str into []string"},
		{"a short topic given as a string", "routes:\n  a:\n    ntfy: dave7f3k\n", "dave7f3k", "line 3: cannot unmarshal !!str into []string"},
		{"a token given as the tokens", "tokens: sk-live-9f2cA7b1E4d8\n", "sk-live", "line 1: cannot unmarshal !!str into []app.TokenFile"},
		{"a webhook secret given as the section", "webhooks: hook-secret-0123456789\n", "hook-se", "line 1: cannot unmarshal !!str into app.WebhooksFile"},
		{"a token written without its key", "tokens:\n  - {name: ci, role: agent, sk-live-9f2cA7b1E4d8}\n", "9f2cA7b1", "line 2: an unknown key (not shown"},
		{"a misspelt key", "routes:\n  a:\n    escalate_too: b\n", "", "line 3: field escalate_too not found"},
	} {
		_, err := app.ParseFile([]byte(c.yaml), none)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want it to say %q", c.name, err, c.want)
			continue
		}
		if c.secret != "" && strings.Contains(err.Error(), c.secret) {
			t.Errorf("%s: the error shows the value: %v", c.name, err)
		}
	}
}

// TestBadDurationNamesItsLine: a duration that does not read says on
// which line it is, as every other mistake the decoder finds does.
// Before, "\"5x\" is not a duration" named neither key nor line, in a
// file with a dozen durations.
func TestBadDurationNamesItsLine(t *testing.T) {
	_, err := app.ParseFile([]byte("routes:\n  a:\n    deciders: {api: ['*']}\n    remind_every: 5x\n"), func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), `line 4: "5x" is not a duration`) {
		t.Fatalf("%v; want it to name line 4", err)
	}
}

// TestReloadRefusesAFileOfCommentsAlone: a file that holds nothing but
// comments (one cut short after its opening comments, as the shipped
// files begin), or nothing but those and a "---" (one cut short after the
// line that begins many a generated file), is refused on a reload as an
// empty one is, and the file in force keeps its routes and tokens.
// Before, it was applied as a configuration of nothing: every route and
// token of the file went away (the file of comments alone, and after it
// was refused, the one with its ---).
func TestReloadRefusesAFileOfCommentsAlone(t *testing.T) {
	good := reloadYAML("ops-one", "")
	r := startBehindLink(t, nil, good)
	const comments = "# askbridge's configuration file (ASKBRIDGE_CONFIG).\n# See the README's Settings section for every key.\n\n"
	for _, cut := range []string{comments, comments + "---\n"} {
		digest := r.rewrite(t, cut)
		d := r.digest(t, r.m.AdminToken)
		if d.Digest != digestOf(good) || d.Refused == nil || d.Refused.Digest != digest || !strings.Contains(d.Refused.Error, "is empty") {
			t.Fatalf("%q: digest endpoint says %+v; want the good file running and the comments refused as empty", cut, d)
		}
		q := askOn(t, r.m.URL, "deploy") // the agent's token and its route are still there
		if got := answerAs(t, r.m.URL, reloadOpsOne, q.ID); got != http.StatusOK {
			t.Fatalf("%q: ops-one after the refusal: %d", cut, got)
		}
	}
}

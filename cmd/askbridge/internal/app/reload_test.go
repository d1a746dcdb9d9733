package app_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/redistest"
)

// The reload tests' tokens, in every file they write.
const (
	reloadAgent  = "reload-agent-token-0001"
	reloadOpsOne = "reload-ops-one-token-01"
	reloadOpsTwo = "reload-ops-two-token-02"
)

// reloadYAML is a configuration whose route deploy is decided on the API
// by the named operator token, plus extra YAML.
func reloadYAML(decider, extra string) string {
	return fmt.Sprintf(`tokens:
  - {name: agent, role: agent, token: %s}
  - {name: ops-one, role: operator, token: %s}
  - {name: ops-two, role: operator, token: %s}
routes:
  deploy:
    deciders:
      api: [%s]
%s`, reloadAgent, reloadOpsOne, reloadOpsTwo, decider, extra)
}

// reloading is a program started from a configuration file the test
// rewrites, with its own SIGHUP channel.
type reloading struct {
	m       *app.Main
	hangups chan os.Signal
	file    string              // where the test writes the configuration
	logs    *apptest.SyncBuffer // the program's warnings and errors
}

// startReloading writes yaml to file, points ASKBRIDGE_CONFIG at config
// (file itself, or a link to it) and runs the program from the
// environment, as serve does.
func startReloading(t *testing.T, env map[string]string, config, file, yaml string) *reloading {
	t.Helper()
	return startReloadingAfter(t, env, config, file, yaml, func() {})
}

// startReloadingAfter is startReloading with read called after the
// settings are read and before the program runs, as the file may change
// while a replica opens its store.
func startReloadingAfter(t *testing.T, env map[string]string, config, file, yaml string, read func()) *reloading {
	t.Helper()
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"ASKBRIDGE_CONFIG": config, "ASKBRIDGE_DATA_DIR": t.TempDir(), "ASKBRIDGE_ADDR": "127.0.0.1:0"}
	for k, v := range env {
		vars[k] = v
	}
	getenv := func(k string) string { return vars[k] }
	s, err := app.LoadSettings(getenv)
	if err != nil {
		t.Fatal(err)
	}
	read()
	r := &reloading{hangups: make(chan os.Signal, 1), file: file, logs: &apptest.SyncBuffer{}}
	log := zerolog.New(io.MultiWriter(zerolog.NewTestWriter(t), r.logs)).Level(zerolog.WarnLevel)
	r.m = &app.Main{Settings: s, Log: log, Hangups: r.hangups, Getenv: getenv}
	if err := r.m.Run(t.Context()); err != nil {
		t.Fatalf("run: %v", err)
	}
	t.Cleanup(func() {
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		r.m.Close()
	})
	return r
}

// startBehindLink runs the program with ASKBRIDGE_CONFIG a symbolic link
// in one directory to the file in another. The program watches both, but
// rewrite's SIGHUP reads the file first: the watch reads a change only
// after two quiet spells, and then finds it read already.
func startBehindLink(t *testing.T, env map[string]string, yaml string) *reloading {
	t.Helper()
	file, link := filepath.Join(t.TempDir(), "askbridge.yaml"), filepath.Join(t.TempDir(), "askbridge.yaml")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	return startReloading(t, env, link, file, yaml)
}

// rewrite writes yaml over the file, sends SIGHUP, and waits until the
// program has read it: applied (its digest runs) or refused.
func (r *reloading) rewrite(t *testing.T, yaml string) string {
	t.Helper()
	if err := os.WriteFile(r.file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	r.hangups <- syscall.SIGHUP
	return r.waitRead(t, yaml)
}

// waitRead waits until the program reports yaml's digest as running or
// as refused, and returns the digest.
func (r *reloading) waitRead(t *testing.T, yaml string) string {
	t.Helper()
	want := digestOf(yaml)
	var d client.ConfigDigest
	read := apptest.ScrapesUntil(10*time.Second, func() bool {
		d = r.digest(t, r.m.AdminToken)
		return d.Digest == want || d.Refused != nil && d.Refused.Digest == want
	})
	if !read {
		t.Fatalf("the program never read the new file: digest endpoint says %+v", d)
	}
	return want
}

// digest reads GET /v1/config/digest with token.
func (r *reloading) digest(t *testing.T, token string) client.ConfigDigest {
	t.Helper()
	var d client.ConfigDigest
	if status := getJSON(t, r.m.URL+"/v1/config/digest", token, &d); status != http.StatusOK {
		t.Fatalf("GET /v1/config/digest: %d", status)
	}
	return d
}

func getJSON(t *testing.T, url, token string, out any) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode
}

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// reloads are the reconfigured events in the program's log, oldest first.
func reloads(t *testing.T, m *app.Main) []core.Event {
	t.Helper()
	evs, err := client.New(m.URL, m.AdminToken).Events(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []core.Event
	for _, e := range evs {
		if e.Kind == core.EventReconfigured {
			out = append(out, e)
		}
	}
	return out
}

func reloadOf(t *testing.T, e core.Event) core.Reload {
	t.Helper()
	var r core.Reload
	if err := json.Unmarshal(e.Payload, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func askOn(t *testing.T, url, route string) *client.AgentQuestion {
	t.Helper()
	q, err := client.New(url, reloadAgent).Ask(t.Context(), client.AskRequest{Kind: core.KindClarification,
		Question: "Which region?", Reversibility: core.Reversible, RunID: "run-reload", Route: route})
	if err != nil {
		t.Fatalf("ask on %s: %v", route, err)
	}
	return q
}

// answerAs answers q with token and returns the HTTP status (200, or the
// refusal's).
func answerAs(t *testing.T, url, token string, id core.QuestionID) int {
	t.Helper()
	_, err := client.New(url, token).Answer(t.Context(), id, client.AnswerRequest{Answer: "eu-west-1"})
	var e *client.Error
	switch {
	case err == nil:
		return http.StatusOK
	case errors.As(err, &e):
		return e.Status
	}
	t.Fatal(err)
	return 0
}

// A good file sent by SIGHUP changes where new questions go at once;
// a question parked before keeps the route it was asked under. The
// reload is an event in the log, on both stores, and is counted.
func TestReloadOnSIGHUP(t *testing.T) {
	apptest.ForEachBackend(t, func(t *testing.T, b apptest.Backend) {
		env := map[string]string{}
		if b.Name == "redis" {
			env["REDIS_URL"] = redistest.Start(t).URL()
		}
		r := startBehindLink(t, env, reloadYAML("ops-one", ""))
		url := r.m.URL
		parked := askOn(t, url, "deploy")

		v2 := reloadYAML("ops-two", "  billing:\n    deciders:\n      api: [ops-one]\n")
		digest := r.rewrite(t, v2)
		if d := r.digest(t, r.m.AdminToken); d.Digest != digest || d.Refused != nil {
			t.Fatalf("digest after the reload: %+v, want %s", d, digest)
		}
		fresh := askOn(t, url, "deploy")
		askOn(t, url, "billing") // a route the new file adds

		// The question asked before keeps ops-one; the new one is ops-two's.
		if got := answerAs(t, url, reloadOpsTwo, parked.ID); got != http.StatusForbidden {
			t.Errorf("ops-two answering the question asked before the reload: %d, want 403", got)
		}
		if got := answerAs(t, url, reloadOpsOne, fresh.ID); got != http.StatusForbidden {
			t.Errorf("ops-one answering the question asked after the reload: %d, want 403", got)
		}
		if got := answerAs(t, url, reloadOpsOne, parked.ID); got != http.StatusOK {
			t.Errorf("ops-one answering the question asked before the reload: %d", got)
		}
		if got := answerAs(t, url, reloadOpsTwo, fresh.ID); got != http.StatusOK {
			t.Errorf("ops-two answering the question asked after the reload: %d", got)
		}

		evs := reloads(t, r.m)
		if len(evs) != 1 {
			t.Fatalf("reconfigured events: %d, want 1", len(evs))
		}
		got := reloadOf(t, evs[0])
		want := core.Reload{Trigger: "sighup", Replica: r.m.ReplicaID, Digest: digest, Applied: true,
			Changed: []string{"routes.billing", "routes.deploy"}}
		if !slices.Equal(got.Changed, want.Changed) || got.Trigger != want.Trigger || got.Digest != want.Digest ||
			!got.Applied || got.Replica != want.Replica || len(got.Restart) != 0 || evs[0].QuestionID != "" {
			t.Fatalf("reconfigured event: %+v (question %q), want %+v", got, evs[0].QuestionID, want)
		}
		fams := apptest.Scrape(t, url, r.m.AdminToken)
		if ok, refused := apptest.Value(fams, "askbridge_config_reloads_total", "result", "ok"), apptest.Value(fams, "askbridge_config_reloads_total", "result", "refused"); ok != 1 || refused != 0 {
			t.Fatalf("config_reloads_total: ok %v, refused %v; want 1 and 0", ok, refused)
		}
	})
}

// A bad file is refused with an error that names the key, logged as an
// event and counted, and the running configuration keeps serving.
func TestReloadRefusesABadFile(t *testing.T) {
	good := reloadYAML("ops-one", "")
	r := startBehindLink(t, nil, good)
	url := r.m.URL
	for i, c := range []struct {
		name, yaml, want string
	}{
		{"broken YAML", "routes: [deploy\n", "yaml: line 1"},
		{"a decider on no surface", reloadYAML("ops-two", "    people: []\n  other:\n    deciders:\n      pager: [ops-two]\n"), "routes.other.deciders.pager"},
		{"an unknown person", reloadYAML("ops-two", "    people: [\"person:zed\"]\n"), `routes.deploy.people: no person named "zed"`},
		{"a misspelt key", reloadYAML("ops-two", "    escalate_too: deploy\n"), "escalate_too"},
		{"a short token", strings.Replace(reloadYAML("ops-two", ""), reloadOpsTwo, "short", 1), "tokens[2]"},
		{"an unknown escalation route", reloadYAML("ops-two", "    escalate_to: nowhere\n"), "routes.deploy.escalate_to"},
		// A file caught mid-write (a shell's > truncates it first) would
		// take every token and route away: applied, it was.
		{"an empty file", "", "empty"},
		// The refusal names the key, not the value: a topic is a
		// password, and the event log is read by observers.
		{"an ntfy topic given as its URL", reloadYAML("ops-two", "    ntfy: [\"https://ntfy.sh/dave-approvals-7f3k\"]\n"), "routes.deploy.ntfy"},
		// Nor do the decoder's own errors, which quoted the start of a
		// value of the wrong type and the whole of a key it did not
		// know (a token written without its "token:").
		{"an ntfy topic written as a string", reloadYAML("ops-two", "    ntfy: dave-approvals-7f3k\n"), "line 9: cannot unmarshal !!str into []string"},
		{"a token written without its key", strings.Replace(reloadYAML("ops-two", ""), "token: "+reloadOpsTwo, "dave-approvals-7f3k", 1), "line 4: an unknown key"},
		// A room on a platform this process does not run: its cards
		// would wait in the outbox for ever. Before, it applied.
		{"a room on a platform that is not running", reloadYAML("ops-two", "    rooms: [{surface: slack, id: C0123}]\n"), "routes.deploy.rooms[0]: slack is not running"},
	} {
		before := len(r.logs.String())
		digest := r.rewrite(t, c.yaml)
		d := r.digest(t, r.m.AdminToken)
		if d.Digest != digestOf(good) || d.Refused == nil || d.Refused.Digest != digest || !strings.Contains(d.Refused.Error, c.want) {
			t.Fatalf("%s: digest endpoint says %+v; want the good file running and this one refused naming %q", c.name, d, c.want)
		}
		evs := reloads(t, r.m)
		if len(evs) != i+1 {
			t.Fatalf("%s: %d reconfigured events, want %d", c.name, len(evs), i+1)
		}
		if rec := reloadOf(t, evs[i]); rec.Applied || rec.Digest != digest || !strings.Contains(evs[i].Reason, c.want) {
			t.Fatalf("%s: event %+v (reason %q)", c.name, rec, evs[i].Reason)
		}
		logged := r.logs.String()[before:]
		if key, _, _ := strings.Cut(c.want, " "); !strings.Contains(logged, `"error":`) || !strings.Contains(logged, key) { // the log's JSON escapes quotes
			t.Fatalf("%s: the log does not name %q", c.name, key)
		}
		if secret := "dave-ap"; strings.Contains(logged, secret) || strings.Contains(evs[i].Reason, secret) || strings.Contains(d.Refused.Error, secret) {
			t.Fatalf("%s: the refusal quotes the topic: %q", c.name, evs[i].Reason)
		}
	}
	fams := apptest.Scrape(t, url, r.m.AdminToken)
	if ok, refused := apptest.Value(fams, "askbridge_config_reloads_total", "result", "ok"), apptest.Value(fams, "askbridge_config_reloads_total", "result", "refused"); ok != 0 || refused != 11 {
		t.Fatalf("config_reloads_total: ok %v, refused %v; want 0 and 11", ok, refused)
	}
	// The first file still rules: deploy is ops-one's, and the tokens
	// are as they were.
	q := askOn(t, url, "deploy")
	if got := answerAs(t, url, reloadOpsTwo, q.ID); got != http.StatusForbidden {
		t.Fatalf("ops-two after the refusals: %d, want 403", got)
	}
	if got := answerAs(t, url, reloadOpsOne, q.ID); got != http.StatusOK {
		t.Fatalf("ops-one after the refusals: %d", got)
	}
}

// A Kubernetes ConfigMap volume: the file is a link through ..data to a
// timestamped directory, and an update makes a new directory and swaps
// ..data by rename. The watch on the directory sees it, without SIGHUP;
// Settings that need a restart are named and left alone; the new tokens
// reach the API and the console at once.
func TestReloadOnConfigMapSwap(t *testing.T) {
	v1 := reloadYAML("ops-one", "")
	cm := newConfigMap(t, t.TempDir(), v1)
	r := startReloading(t, nil, cm.link(), cm.file(), v1)
	if d := r.digest(t, r.m.AdminToken); d.Digest != digestOf(v1) {
		t.Fatalf("digest at start: %+v, want %s", d, digestOf(v1))
	}

	// The update: ops-two decides, ops-one's token is replaced, and the
	// shard count (a restart's business) changes.
	const renewed = "reload-ops-one-renewed-1"
	v2 := strings.Replace(reloadYAML("ops-two", "policies:\n  shards: 4\n"), reloadOpsOne, renewed, 1)
	cm.update(t, v2)
	r.waitRead(t, v2)
	if d := r.digest(t, r.m.AdminToken); d.Digest != digestOf(v2) || d.Refused != nil {
		t.Fatalf("after the swap: %+v", d)
	}

	evs := reloads(t, r.m)
	if len(evs) != 1 {
		t.Fatalf("reconfigured events: %d, want 1 (the burst of events of one swap is one reading)", len(evs))
	}
	rec := reloadOf(t, evs[0])
	if rec.Trigger != "file" || !rec.Applied || !slices.Equal(rec.Restart, []string{"policies.shards"}) ||
		!slices.Equal(rec.Changed, []string{"routes.deploy", "tokens"}) {
		t.Fatalf("reconfigured event: %+v", rec)
	}
	if logs := r.logs.String(); !strings.Contains(logs, `"setting":"policies.shards"`) || !strings.Contains(logs, "takes a restart") {
		t.Fatalf("the log does not name the setting that waits for a restart:\n%s", logs)
	}
	q := askOn(t, r.m.URL, "deploy")
	if got := answerAs(t, r.m.URL, reloadOpsOne, q.ID); got != http.StatusUnauthorized {
		t.Fatalf("the replaced secret: %d, want 401", got)
	}
	if _, ok := r.m.ConsoleTokens().BySecret(reloadOpsOne); ok {
		t.Fatal("the console still signs in with the replaced secret")
	}
	if acct, ok := r.m.ConsoleTokens().BySecret(renewed); !ok || acct.Name != "ops-one" {
		t.Fatalf("the console with the new secret: %+v, %v", acct, ok)
	}
	if got := answerAs(t, r.m.URL, reloadOpsTwo, q.ID); got != http.StatusOK {
		t.Fatalf("ops-two on deploy after the swap: %d", got)
	}
	// Only admins read the digest.
	for _, tok := range []string{reloadAgent, reloadOpsTwo} {
		if status := getJSON(t, r.m.URL+"/v1/config/digest", tok, &client.ConfigDigest{}); status != http.StatusForbidden {
			t.Fatalf("GET /v1/config/digest as a non-admin: %d, want 403", status)
		}
	}
}

package app_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/rs/zerolog"
)

// openWith loads env as LoadSettings does and opens a chat adapter with
// the result, so a bad setting is reported wherever it is caught.
func openWith(t *testing.T, open app.ChatOpener, env map[string]string, svc *core.Service) (app.ChatAdapter, error) {
	s, err := app.LoadSettings(func(k string) string { return env[k] })
	if err != nil {
		return nil, err
	}
	return open(t.Context(), s, svc, nil, zerolog.Nop())
}

func TestParseFileNamesTheBadKey(t *testing.T) {
	env := func(k string) string {
		if k == "OPS_TOKEN" {
			return "ops-token-0123456789"
		}
		return ""
	}
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown top-level key", "routez: {}", "field routez not found"},
		{"unknown route key", "routes: {a: {room: []}}", "field room not found"},
		{"bad room surface", "routes: {a: {rooms: [{surface: irc, id: x}]}}", "routes.a.rooms[0].surface"},
		{"missing room id", "routes: {a: {rooms: [{surface: slack}]}}", "routes.a.rooms[0].id is required"},
		// A Telegram room is a chat id, @<user id> or <chat id>:<topic
		// id>: a bad one was refused only at every delivery. (A topic of
		// a private chat is one since Bot API 9.3.)
		{"a telegram topic that is no number", "routes: {a: {rooms: [{surface: telegram, id: '-1001234567890:general'}]}}", "routes.a.rooms[0].id: "},
		{"a telegram topic of a direct message", "routes: {a: {rooms: [{surface: telegram, id: '@12345:7'}]}}", "routes.a.rooms[0].id: "},
		{"bad decider surface", "routes: {a: {deciders: {irc: [x]}}}", "routes.a.deciders.irc"},
		{"role entry naming no role", "routes: {a: {deciders: {slack: [\"role:\"]}}}", "routes.a.deciders.slack[0]: \"role:\" names no role"},
		{"role entry naming a blank role", "routes: {a: {deciders: {slack: [\"role: \"]}}}", "routes.a.deciders.slack[0]: \"role: \" names no role"},
		{"role entry with a space before its role", "routes: {a: {deciders: {slack: [\"role: S0ADMINS\"]}}}", "routes.a.deciders.slack[0]: \"role: S0ADMINS\" has spaces around its role"},
		{"role entry where deciders carry no roles", "routes: {a: {deciders: {telegram: [\"role:admins\"]}}}", "routes.a.deciders.telegram[0]: \"role:admins\" would match no one"},
		{"unknown escalation", "routes: {a: {escalate_to: b}}", "routes.a.escalate_to"},
		{"token without role", "tokens: [{name: x, token: abcdefghijklmnopq}]", "tokens[0].role"},
		{"token too short", "tokens: [{name: x, role: agent, token: short}]", "tokens[0]: the token must be at least 16"},
		{"empty token env", "tokens: [{name: x, role: agent, token_env: NOPE}]", "tokens[0].token_env: environment variable NOPE is empty"},
		{"a secret written as the token env", "tokens: [{name: x, role: agent, token_env: sk_live_9f2cA7b1E4d8SECRET}]", "tokens[0].token_env: the environment variable it names is empty (its name is not shown"},
		{"a secret with other characters as the token env", "tokens: [{name: x, role: agent, token_env: 'xoxb-123-abc'}]", "tokens[0].token_env: not an environment variable name"},
		{"duplicate token name", "tokens: [{name: x, role: agent, token_env: OPS_TOKEN}, {name: x, role: agent, token_env: OPS_TOKEN}]", "tokens[1].name"},
		{"bad duration", "policies: {retention: soon}", "not a duration"},
		{"bad shards", "policies: {shards: 99}", "policies.shards"},
		{"bad directive", "directives: [{id: x, text: '', scope: all}]", "directives"},
		{"an id claimed by two people", "people: {alice: {slack: U1}, bob: {slack: U1}}", `slack id "U1" is claimed by both "alice" and "bob"`},
		{"an unknown person in a group", "people: {alice: {slack: U1}}\ngroups: {leads: [alice, zed]}", `groups.leads: no person named "zed"`},
		{"an unknown person on a route", "routes: {a: {people: [person:zed]}}", `routes.a.people: no person named "zed"`},
		{"an unknown group on a route", "routes: {a: {people: [group:leads]}}", `routes.a.people: no group named "leads"`},
		{"a person among a surface's ids", "people: {alice: {slack: U1}}\nroutes: {a: {deciders: {slack: [person:alice]}}}", "routes.a.deciders.slack[0]"},
		{"an unknown token of a person", "people: {alice: {tokens: [nope]}}", `people.alice.tokens[0]: no token named "nope"`},
		{"a bad preferred surface", "people: {alice: {slack: U1, prefer: fax}}", "people.alice.prefer"},
		{"reminders too often", "routes: {a: {remind_every: 10s}}", "routes.a.remind_every: must be at least 1m"},
		{"too many reminders", "routes: {a: {remind_every: 1h, remind_max: 99}}", "routes.a.remind_max"},
		{"a cap without reminders", "routes: {a: {remind_max: 2}}", "routes.a.remind_max: set without remind_every"},
		{"a bad deny policy", "routes: {a: {deny: maybe}}", "routes.a.deny"},
		{"a quorum above the people", "people: {alice: {slack: U1}}\nroutes: {a: {people: [person:alice], quorum: 2}}", `route "a": a quorum of 2, but only 1 people`},
		{"deny count on accounts", "routes: {a: {deciders: {slack: [U1]}, quorum: 2, deny: count}}", `route "a": deny count needs`},
		{"an unknown person key", "people: {alice: {matrix: mx}}", "field matrix not found"},
		{"a rule that does not compile", "routes: {a: {rules: [{when: 'tool == \"Read\"', decide: allow}, {when: 'tool == ', decide: allow}]}}",
			"routes.a.rules[1].when: line 1, column 9: Syntax error"},
		{"a rule that is not a bool", "routes: {a: {rules: [{when: 'args', decide: allow}]}}",
			"routes.a.rules[0].when: the condition returns dyn; it must return bool"},
		{"a rule on an unknown route", "routes: {a: {rules: [{when: 'true', route: b}]}}", `routes.a.rules[0].route: no route named "b"`},
		{"a rule's bad decision", "routes: {a: {rules: [{when: 'true', decide: perhaps}]}}", `routes.a.rules[0].decide: "perhaps" is not allow, deny or ask`},
		{"an unknown rule key", "routes: {a: {rules: [{if: 'true'}]}}", "field if not found"},
		{"a second YAML document", "routes: {}\n---\npolicies: {shards: 99}\n", "more than one YAML document"},
		// The file's own index, not the API's (which counts the generated
		// admin token first): before, these said tokens[1] and tokens[2].
		{"a token named admin", "tokens: [{name: admin, role: operator, token_env: OPS_TOKEN}]", `tokens[0].name: "admin" is the generated admin token's name`},
		{"a token name of spaces", "tokens: [{name: '  ', role: agent, token_env: OPS_TOKEN}]", "tokens[0].name is required"},
		{"a token name too long", "tokens: [{name: " + strings.Repeat("n", 129) + ", role: agent, token_env: OPS_TOKEN}]", "tokens[0].name is longer than 128 bytes"},
		{"one secret for two tokens", "tokens: [{name: a, role: agent, token_env: OPS_TOKEN}, {name: b, role: agent, token_env: OPS_TOKEN}]",
			"tokens[1] (b): the secret is tokens[0]'s too"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := app.ParseFile([]byte(tt.yaml), env)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "sk_live") || strings.Contains(err.Error(), "xoxb") {
				t.Fatalf("the error shows a secret written where a variable's name goes: %v", err)
			}
		})
	}
}

// A file with mistakes in several routes names the same one each time
// it is loaded: the first by name, not whichever a map gave first.
func TestParseFileNamesTheFirstBadRouteByName(t *testing.T) {
	yaml := "routes: {c: {deny: maybe}, a: {deny: maybe}, d: {deny: maybe}, b: {deny: maybe}}"
	for range 30 {
		_, err := app.ParseFile([]byte(yaml), func(string) string { return "" })
		if err == nil || !strings.HasPrefix(err.Error(), "routes.a.deny") {
			t.Fatalf("error %v, want routes.a.deny's", err)
		}
	}
}

func TestParseFileGood(t *testing.T) {
	env := func(k string) string { return map[string]string{"OPS_TOKEN": "ops-token-0123456789"}[k] }
	f, err := app.ParseFile([]byte(`
routes:
  infra:
    rooms: [{surface: slack, id: C1}]
    deciders: {slack: [U1, "role:S1"], api: [ops]}
    escalate_to: oncall
  oncall: {deciders: {api: ["*"]}}
tokens:
  - {name: ops, role: operator, token_env: OPS_TOKEN}
policies: {retention: 7d, default_timeout: 90m}
`), env)
	if err != nil {
		t.Fatal(err)
	}
	if f.Tokens[0].Token.Reveal() != "ops-token-0123456789" || time.Duration(f.Policies.Retention) != 7*24*time.Hour {
		t.Fatalf("parsed %+v", f)
	}
	cfg := app.Settings{File: f}.CoreConfig([]byte("k"))
	if _, ok := cfg.Routes["default"]; ok || cfg.Routes["infra"].EscalateTo != "oncall" {
		t.Fatalf("routes %+v", cfg.Routes)
	}
	// People: one person on three surfaces and the API, in a group that a
	// route names.
	f, err = app.ParseFile([]byte(`
people:
  alice: {name: Alice Example, slack: U1, discord: "42", telegram: "77", tokens: [ops], dm: true, prefer: telegram}
  bob: {slack: U2}
groups: {leads: [alice, bob]}
routes:
  infra: {people: ["group:leads"], deciders: {slack: [U9]}, remind_every: 2h, remind_max: 4}
  pair: {people: ["group:leads"], quorum: 2, deny: count}
tokens:
  - {name: ops, role: operator, token_env: OPS_TOKEN}
`), env)
	if err != nil {
		t.Fatal(err)
	}
	cfg = app.Settings{File: f}.CoreConfig([]byte("k"))
	alice := cfg.People["alice"]
	if alice.DisplayName != "Alice Example" || !alice.DM || alice.Prefer != core.SurfaceTelegram ||
		alice.IDs[core.SurfaceDiscord][0] != "42" || alice.IDs[core.SurfaceConsole][0] != "ops" || alice.IDs[core.SurfaceAPI][0] != "ops" {
		t.Fatalf("alice %+v", alice)
	}
	if got := cfg.Groups["leads"].Members; len(got) != 2 || cfg.Routes["infra"].People[0] != "group:leads" ||
		cfg.Routes["infra"].RemindEvery != 2*time.Hour || cfg.Routes["infra"].RemindMax != 4 ||
		cfg.Routes["pair"].Quorum != 2 || cfg.Routes["pair"].Deny != core.DenyCount {
		t.Fatalf("groups %+v routes %+v", cfg.Groups, cfg.Routes)
	}
	if _, err := core.New(nil, cfg, nil); err != nil {
		t.Fatalf("core refuses what the file check passed: %v", err)
	}
	// An empty file is a valid, empty configuration with the default route.
	f, err = app.ParseFile(nil, env)
	if err != nil || len(app.Settings{File: f}.CoreConfig([]byte("k")).Routes) != 1 {
		t.Fatalf("empty file: %+v, %v", f, err)
	}
}

func TestSecretsNeverPrint(t *testing.T) {
	s := app.Secret("hunter2-is-my-password")
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%v %s %#v", s, s, s), fmt.Sprintf("%+v", app.TokenFile{Token: s})} {
		if strings.Contains(out, "hunter2") {
			t.Fatalf("a secret printed: %q", out)
		}
	}
}

// TestREADMEConfigLoads keeps the README's example configuration honest:
// it must load as written.
func TestREADMEConfigLoads(t *testing.T) {
	raw, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "```yaml\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("the README has no yaml example")
	}
	env := func(k string) string { return strings.ToLower(k) + "-0123456789abcdef" }
	f, err := app.ParseFile([]byte(example), env)
	if err != nil {
		t.Fatalf("the README's configuration does not load: %v", err)
	}
	if len(f.Routes) != 3 || len(f.Tokens) != 3 || len(f.Directives) != 1 {
		t.Fatalf("parsed %d routes, %d tokens, %d directives", len(f.Routes), len(f.Tokens), len(f.Directives))
	}
	cfg := app.Settings{File: f}.CoreConfig([]byte("k"))
	if _, err := core.New(nil, cfg, nil); err != nil {
		t.Fatalf("core refuses the README's routes: %v", err)
	}
}

// TestREADMEPeopleConfigLoads keeps the README's people example honest.
func TestREADMEPeopleConfigLoads(t *testing.T) {
	raw, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "## People, quorum and reminders")
	_, rest, ok2 := strings.Cut(rest, "```yaml\n")
	example, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("the README has no people example")
	}
	env := func(k string) string { return strings.ToLower(k) + "-0123456789abcdef" }
	f, err := app.ParseFile([]byte(example), env)
	if err != nil {
		t.Fatalf("the README's people example does not load: %v", err)
	}
	cfg := app.Settings{File: f}.CoreConfig([]byte("k"))
	if _, err := core.New(nil, cfg, nil); err != nil {
		t.Fatalf("core refuses the README's people example: %v", err)
	}
	if r := cfg.Routes["infra"]; r.Quorum != 2 || len(cfg.People) != 2 || !cfg.People["alice"].DM {
		t.Fatalf("parsed %+v", cfg)
	}
}

// TestSettingsDefaultsAndTrimming: defaults come from Settings' tags, and
// every platform's values are trimmed alike, so a token pasted with a
// newline works on Telegram as it does on Slack.
func TestSettingsDefaultsAndTrimming(t *testing.T) {
	s := apptest.FromEnv(t, nil)
	if s.Addr != "127.0.0.1:8080" || s.DataDir != "askbridge-data" || s.LogFormat != "auto" || s.Discord.Gateway != "on" {
		t.Fatalf("defaults: %+v", s)
	}
	s = apptest.FromEnv(t, map[string]string{
		"TELEGRAM_BOT_TOKEN": " 7000001:secret\n", "SLACK_BOT_TOKEN": "xoxb-1\n", "SLACK_SIGNING_SECRET": " s ",
		"ASKBRIDGE_ADDR": " 127.0.0.1:9 ", "ASKBRIDGE_DATA_DIR": "\t",
	})
	if s.Telegram.BotToken.Reveal() != "7000001:secret" || s.Slack.BotToken.Reveal() != "xoxb-1" || s.Slack.SigningSecret.Reveal() != "s" {
		t.Fatal("a platform's values were not trimmed")
	}
	if s.Addr != "127.0.0.1:9" || s.DataDir != "askbridge-data" {
		t.Fatalf("addr %q, data dir %q: a blank value must read as unset", s.Addr, s.DataDir)
	}
	for key, v := range map[string]string{"ASKBRIDGE_LOG_FORMAT": "xml", "TELEGRAM_API_URL": "http://x/bot", "ASKBRIDGE_LOG_LEVEL": "verbose"} {
		env := map[string]string{key: v, "TELEGRAM_BOT_TOKEN": "1:x"}
		if _, err := app.LoadSettings(func(k string) string { return env[k] }); err == nil || !strings.HasPrefix(err.Error(), key+":") {
			t.Errorf("%s=%q: %v", key, v, err)
		}
	}
}

// TestSecretsFromEnvironmentAreTrimmed: a secret read through a *_env key
// is trimmed as every environment value is; a Kubernetes secret mounted
// with its trailing newline made a token no client could send, and a
// blank one passed. Before, each was taken as it came.
func TestSecretsFromEnvironmentAreTrimmed(t *testing.T) {
	env := map[string]string{"OPS_TOKEN": "ops-token-0123456789\n", "BLANK": "   "}
	getenv := func(k string) string { return env[k] }
	f, err := app.ParseFile([]byte("tokens: [{name: ops, role: operator, token_env: OPS_TOKEN}]"), getenv)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Tokens[0].Token.Reveal(); got != "ops-token-0123456789" {
		t.Errorf("token %q, want it trimmed", got)
	}
	if _, err := app.ParseFile([]byte("tokens: [{name: ops, role: operator, token_env: BLANK}]"), getenv); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("a blank token_env: %v, want it refused as empty", err)
	}
}

// TestPlatformSettingsWithoutTheirToken: a platform's settings given
// without the one that turns it on are refused, naming both; before, a
// misspelt bot token beside a signing secret started the server without
// the platform, and its cards waited in the outbox unseen.
func TestPlatformSettingsWithoutTheirToken(t *testing.T) {
	for env, want := range map[string]string{
		"SLACK_SIGNING_SECRET": "SLACK_SIGNING_SECRET: set, but SLACK_BOT_TOKEN is not",
		"DISCORD_PUBLIC_KEY":   "DISCORD_PUBLIC_KEY: set, but DISCORD_BOT_TOKEN is not",
		"TELEGRAM_WEBHOOK_URL": "TELEGRAM_WEBHOOK_URL: set, but TELEGRAM_BOT_TOKEN is not",
		"EMAIL_FROM":           "EMAIL_FROM: set, but EMAIL_SMTP_HOST is not",
		"NTFY_TOKEN":           "NTFY_TOKEN: set, but NTFY_URL is not",
	} {
		vals := map[string]string{env: "https://example.test/x"}
		if _, err := app.LoadSettings(func(k string) string { return vals[k] }); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s alone: %v, want %q", env, err, want)
		}
	}
	// Defaults alone turn nothing on and refuse nothing.
	if _, err := app.LoadSettings(func(string) string { return "" }); err != nil {
		t.Errorf("no platform: %v", err)
	}
}

package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
)

// TestServeRefusesASurfaceThatIsNotRunning: a route's room, or a
// person's direct messages, on a platform whose adapter is not on (its
// variable unset) would have cards wait in the outbox for ever while
// asks succeed and /readyz says ready. serve refuses to start instead,
// naming the key and the variable that turns the platform on.
func TestServeRefusesASurfaceThatIsNotRunning(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		want       []string
	}{
		{"a Slack room", "routes: {default: {rooms: [{surface: slack, id: C0123}], deciders: {api: ['*']}}}",
			[]string{"routes.default.rooms[0]", "SLACK_BOT_TOKEN"}},
		{"a Discord room after a Slack one", "routes: {ops: {rooms: [{surface: slack, id: C0123}, {surface: discord, id: '123'}]}}",
			[]string{"routes.ops.rooms[1]", "DISCORD_BOT_TOKEN"}},
		{"an email recipient", "routes: {ops: {email: [ops@example.com]}}", []string{"routes.ops.email", "EMAIL_SMTP_HOST"}},
		{"an ntfy topic", "routes: {ops: {ntfy: [ops-approvals]}}", []string{"routes.ops.ntfy", "NTFY_URL"}},
		{"a Teams room", "routes: {ops: {rooms: [{surface: teams, id: '19:x@thread.tacv2'}]}}", []string{"routes.ops.rooms[0]", "TEAMS_APP_ID"}},
		{"a person's direct messages", "people: {alice: {telegram: '99', dm: true}}\nroutes: {ops: {people: ['person:alice']}}",
			[]string{"people.alice.dm", "TELEGRAM_BOT_TOKEN"}},
		{"direct messages on the one surface a route lets them answer on",
			"people: {alice: {slack: U1, discord: '42', prefer: slack, dm: true}}\nroutes: {ops: {rooms: [{surface: slack, id: C1}], deciders: {discord: ['42']}}}",
			[]string{"routes.ops.deciders", "alice", "DISCORD_BOT_TOKEN"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"ASKBRIDGE_ADDR": "127.0.0.1:0", "ASKBRIDGE_DATA_DIR": t.TempDir(),
				"ASKBRIDGE_CONFIG": filepath.Join(t.TempDir(), "askbridge.yaml")}
			if strings.Contains(c.name, "after a Slack one") || strings.Contains(c.name, "one surface a route") {
				env["SLACK_BOT_TOKEN"], env["SLACK_SIGNING_SECRET"] = "xoxb-test-bot-token", "slack-signing-secret"
			}
			if err := os.WriteFile(env["ASKBRIDGE_CONFIG"], []byte(c.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := app.LoadSettings(func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			m := &app.Main{Settings: s, Log: zerolog.Nop()}
			err = m.Run(t.Context())
			if err == nil {
				m.Close()
				t.Fatal("serve started")
			}
			for _, want := range c.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %s", err, want)
				}
			}
			if _, err := os.Stat(filepath.Join(env["ASKBRIDGE_DATA_DIR"], "askbridge.db")); err != nil {
				t.Errorf("the store: %v", err)
			}
		})
	}
}

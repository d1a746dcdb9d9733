package app_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/teams/teamsfake"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

// TestPlatformEndpointsTakeNoCleartext: an endpoint a platform's secret
// is sent to (a bot token, the Teams app's client secret) or whose
// signing keys are trusted is refused by name when it is http to another
// machine, and taken as https or as http to a loopback address (a local
// fake). Before, any http URL was taken, so a typo or an override sent
// the token in the clear.
func TestPlatformEndpointsTakeNoCleartext(t *testing.T) {
	teams := map[string]string{"TEAMS_APP_ID": apptest.TmAppID, "TEAMS_APP_PASSWORD": apptest.TmSecret, "TEAMS_TENANT_ID": teamsfake.Tenant}
	with := func(base map[string]string, k, v string) map[string]string {
		env := map[string]string{k: v}
		for bk, bv := range base {
			env[bk] = bv
		}
		return env
	}
	slack := map[string]string{"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"}
	discord := map[string]string{"DISCORD_BOT_TOKEN": "t"}
	telegram := map[string]string{"TELEGRAM_BOT_TOKEN": apptest.TgToken}
	for _, c := range []struct {
		base        map[string]string
		key, remote string
		local       string
	}{
		{slack, "SLACK_API_URL", "http://slack.example/api/", "http://127.0.0.1:9/api/"},
		{discord, "DISCORD_API_URL", "http://discord.example/api/v10/", "http://localhost:9/api/v10/"},
		{telegram, "TELEGRAM_API_URL", "http://tg.example/bot%s/%s", "http://[::1]:9/bot%s/%s"},
		{teams, "TEAMS_SERVICE_URL", "http://smba.example/teams/", "http://127.0.0.1:9/teams/"},
		{teams, "TEAMS_TOKEN_URL", "http://login.example/token", "http://127.0.0.1:9/token"},
		{teams, "TEAMS_OPENID_URL", "http://login.example/openid", "http://127.0.0.1:9/openid"},
	} {
		_, err := app.LoadSettings(func(k string) string { return with(c.base, c.key, c.remote)[k] })
		if err == nil || !strings.HasPrefix(err.Error(), c.key+":") || !strings.Contains(err.Error(), "use https") {
			t.Errorf("%s=%s: %v; want it refused by name", c.key, c.remote, err)
		}
		for _, ok := range []string{c.local, strings.Replace(c.remote, "http://", "https://", 1)} {
			if _, err := app.LoadSettings(func(k string) string { return with(c.base, c.key, ok)[k] }); err != nil {
				t.Errorf("%s=%s: %v; want it taken", c.key, ok, err)
			}
		}
	}
}

// TestNtfyTokenTakesNoCleartextUnlessTrusted: an ntfy server reached
// over http on another machine is refused at load when a token (or a
// password in the URL) would go to it, naming the setting that lets it
// (a self-hosted server on a trusted network, reached by name), and the
// password is not repeated; without a credential, or with the setting,
// it is taken. Before, the load took it and the server would not start,
// with no setting to say the network is trusted.
func TestNtfyTokenTakesNoCleartextUnlessTrusted(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string // "" for taken
	}{
		{map[string]string{"NTFY_URL": "http://ntfy:80", "NTFY_TOKEN": "tk_secret"}, "NTFY_TOKEN_OVER_HTTP=true"},
		{map[string]string{"NTFY_URL": "http://bob:hunter2@ntfy:80"}, "NTFY_TOKEN_OVER_HTTP=true"},
		{map[string]string{"NTFY_URL": "http://ntfy:80", "NTFY_TOKEN": "tk_secret", "NTFY_TOKEN_OVER_HTTP": "true"}, ""},
		{map[string]string{"NTFY_URL": "http://bob:hunter2@ntfy:80", "NTFY_TOKEN_OVER_HTTP": "true"}, ""},
		{map[string]string{"NTFY_URL": "http://ntfy:80"}, ""},
		{map[string]string{"NTFY_URL": "http://127.0.0.1:9", "NTFY_TOKEN": "tk_secret"}, ""},
		{map[string]string{"NTFY_URL": "https://ntfy.example", "NTFY_TOKEN": "tk_secret"}, ""},
		{map[string]string{"NTFY_URL": "http://ntfy:80", "NTFY_TOKEN": "tk_secret", "NTFY_TOKEN_OVER_HTTP": "maybe"}, `NTFY_TOKEN_OVER_HTTP: "maybe"`},
	} {
		c.env["ASKBRIDGE_PUBLIC_URL"] = "https://bridge.example"
		_, err := app.LoadSettings(func(k string) string { return c.env[k] })
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v; want it taken", c.env, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v; want it refused naming %s", c.env, err, c.want)
		case err != nil && strings.Contains(err.Error(), "hunter2"):
			t.Errorf("%v: the refusal shows the password: %v", c.env, err)
		}
	}
}

package app_test

import (
	"os"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/teams/teamsfake"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// TestTeamsSettings: each missing or malformed variable is named.
func TestTeamsSettings(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"TEAMS_APP_PASSWORD": apptest.TmSecret}, "TEAMS_APP_ID"},
		{map[string]string{"TEAMS_APP_ID": apptest.TmAppID, "TEAMS_TENANT_ID": teamsfake.Tenant}, "TEAMS_APP_PASSWORD"},
		{map[string]string{"TEAMS_APP_ID": apptest.TmAppID, "TEAMS_APP_PASSWORD": apptest.TmSecret}, "TEAMS_TENANT_ID"},
		{map[string]string{"TEAMS_APP_ID": apptest.TmAppID, "TEAMS_APP_PASSWORD": apptest.TmSecret, "TEAMS_TENANT_ID": teamsfake.Tenant,
			"TEAMS_SERVICE_URL": "smba.example/teams"}, "TEAMS_SERVICE_URL"},
	} {
		_, err := app.LoadSettings(func(k string) string { return c.env[k] })
		if err == nil || !strings.HasPrefix(err.Error(), c.want+":") {
			t.Errorf("%v: %v; want an error naming %s", c.env, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), apptest.TmSecret) {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

// TestTeamsSettingsNameTheFirstBadURL: with several URLs wrong, the
// refusal names the same one, the first in the order they are listed.
func TestTeamsSettingsNameTheFirstBadURL(t *testing.T) {
	env := map[string]string{"TEAMS_APP_ID": apptest.TmAppID, "TEAMS_APP_PASSWORD": apptest.TmSecret, "TEAMS_TENANT_ID": teamsfake.Tenant,
		"TEAMS_TOKEN_URL": "login.example/token", "TEAMS_OPENID_URL": "login.example/openid"}
	for range 30 {
		if _, err := app.LoadSettings(func(k string) string { return env[k] }); err == nil || !strings.HasPrefix(err.Error(), "TEAMS_TOKEN_URL:") {
			t.Fatalf("%v; want TEAMS_TOKEN_URL refused", err)
		}
	}
}

// TestREADMETeamsConfigLoads keeps the Teams example honest: it loads,
// core takes it, and the person is known on Teams by their object id.
func TestREADMETeamsConfigLoads(t *testing.T) {
	raw, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "\n### Microsoft Teams\n")
	_, rest, ok2 := strings.Cut(rest, "```yaml\n")
	example, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("the README has no Teams example")
	}
	f, err := app.ParseFile([]byte(example), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	rooms := f.Routes["ops"].Rooms
	if len(rooms) != 1 || rooms[0].Surface != core.SurfaceTeams || !strings.HasSuffix(rooms[0].ID, "@thread.tacv2") {
		t.Fatalf("rooms %+v", rooms)
	}
	if p := f.People["erin"].Person(); len(p.IDs[core.SurfaceTeams]) != 1 || !p.DM {
		t.Fatalf("person %+v", p)
	}
	if _, err := core.New(nil, app.Settings{File: f}.CoreConfig([]byte("key of sixteen bytes")), nil); err != nil {
		t.Fatal(err)
	}
}

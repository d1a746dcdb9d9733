package apptest

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/core"
)

// FromEnv is what LoadSettings makes of env, for tests that turn a
// platform on.
func FromEnv(t *testing.T, env map[string]string) app.Settings {
	t.Helper()
	s, err := app.LoadSettings(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// AddTeam gives f what every driver's team route needs (see
// adaptertest.TeamRoute): alice (who takes DMs) and bob as people with
// their accounts on surface, bob in a group, and the route posting to
// room that names alice and the group (no account) and reminds hourly,
// twice at most.
func AddTeam(f *app.File, surface core.Surface, room string, alice, bob adaptertest.User) {
	person := func(name string, u adaptertest.User) app.PersonFile {
		p := app.PersonFile{Name: name}
		switch surface {
		case core.SurfaceSlack:
			p.Slack = u.ID
		case core.SurfaceDiscord:
			p.Discord = u.ID
		case core.SurfaceTelegram:
			p.Telegram = u.ID
		case core.SurfaceTeams:
			p.Teams = u.ID
		case core.SurfaceEmail:
			p.Email = u.ID
		case core.SurfaceNtfy:
			p.Ntfy = u.ID
		}
		return p
	}
	if f.People == nil {
		f.People = map[string]app.PersonFile{}
	}
	f.People["alice"] = person(adaptertest.TeamAlice, alice)
	a := f.People["alice"]
	a.DM = true
	f.People["alice"] = a
	f.People["bob"] = person(adaptertest.TeamBob, bob)
	f.Groups = map[string][]string{adaptertest.TeamGroup: {"bob"}}
	f.Routes[adaptertest.TeamRoute] = app.RouteFile{
		Rooms:       []core.Room{{Surface: surface, ID: room}},
		People:      []string{core.PersonPrefix + "alice", core.GroupPrefix + adaptertest.TeamGroup},
		RemindEvery: app.Duration(time.Hour), RemindMax: 2,
	}
}

const HookTestdata = "../../../../adapters/hooks/testdata"

const (
	TmAppID   = "00000000-0000-0000-0000-0000000000b0"
	TmSecret  = "app-password~secret"
	TmChannel = "19:ops0000000000000000000000000000@thread.tacv2"
)

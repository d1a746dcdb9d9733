package app

import (
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/core"
)

// addTeam gives f what every driver's team route needs (see
// adaptertest.TeamRoute): alice (who takes DMs) and bob as people with
// their accounts on surface, bob in a group, and the route posting to
// room that names alice and the group (no account) and reminds hourly,
// twice at most.
func addTeam(f *File, surface core.Surface, room string, alice, bob adaptertest.User) {
	person := func(name string, u adaptertest.User) PersonFile {
		p := PersonFile{Name: name}
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
		f.People = map[string]PersonFile{}
	}
	f.People["alice"] = person(adaptertest.TeamAlice, alice)
	a := f.People["alice"]
	a.DM = true
	f.People["alice"] = a
	f.People["bob"] = person(adaptertest.TeamBob, bob)
	f.Groups = map[string][]string{adaptertest.TeamGroup: {"bob"}}
	f.Routes[adaptertest.TeamRoute] = RouteFile{
		Rooms:       []core.Room{{Surface: surface, ID: room}},
		People:      []string{core.PersonPrefix + "alice", core.GroupPrefix + adaptertest.TeamGroup},
		RemindEvery: Duration(time.Hour), RemindMax: 2,
	}
}

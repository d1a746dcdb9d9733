package app

import (
	"fmt"

	"github.com/askbridge/askbridge/core"
)

// surfaceSwitch is the variable that turns each chat surface on.
var surfaceSwitch = map[core.Surface]string{
	core.SurfaceSlack:    "SLACK_BOT_TOKEN",
	core.SurfaceDiscord:  "DISCORD_BOT_TOKEN",
	core.SurfaceTelegram: "TELEGRAM_BOT_TOKEN",
	core.SurfaceTeams:    "TEAMS_APP_ID",
	core.SurfaceEmail:    "EMAIL_SMTP_HOST",
	core.SurfaceNtfy:     "NTFY_URL",
}

// running is the set of surfaces whose adapter this program runs.
func (m *Main) running() map[core.Surface]bool {
	on := map[core.Surface]bool{}
	for _, c := range m.chats {
		on[c.Surface()] = true
	}
	return on
}

// checkSurfaces refuses a file that sends anything to a chat surface not
// running here: a route's room (the cards of its questions, its digests,
// escalations to it), or a person's direct messages, where core sends
// them (dms: core.Service.DMs under the file). The deliveries would be
// stored and never sent, while every ask succeeded and /readyz said
// ready. serve refuses such a file at start, and a reload refuses it as
// it refuses any bad file; the error names the key at fault and the
// variable that turns the surface on.
func checkSurfaces(f File, dms []core.DM, running map[core.Surface]bool) error {
	for _, name := range inOrder(f.Routes) {
		r := f.Routes[name]
		for i, room := range r.Rooms {
			if running[room.Surface] {
				continue
			}
			key, what := fmt.Sprintf("routes.%s.rooms[%d]", name, i), "room"
			if i >= len(r.Rooms)-r.oneWay { // from the route's email: or ntfy: recipients
				key, what = fmt.Sprintf("routes.%s.%s", name, room.Surface), "recipients"
			}
			return fmt.Errorf("%s: %s, so its cards would wait in the outbox for ever: set %s, or take the %s out",
				key, notRunning(room.Surface), surfaceSwitch[room.Surface], what)
		}
	}
	// dms lists each person's own surface before any route's.
	own := map[string]core.Surface{}
	for _, d := range dms {
		if d.Route == "" {
			own[d.Person] = d.Surface
		}
	}
	for _, d := range dms {
		sf := d.Surface
		switch {
		case running[sf]:
		case d.Route == "":
			return fmt.Errorf("people.%s.dm: their direct messages go to %s, and %s, so they would wait in the outbox for ever: set %s, prefer a surface that runs (people.%s.prefer), or turn dm off",
				d.Person, sf, notRunning(sf), surfaceSwitch[sf], d.Person)
		default:
			key := "routes." + d.Route + ".people"
			if !d.Named {
				key = "routes." + d.Route + ".deciders." + string(sf)
			}
			by := ""
			if !d.Own {
				by = fmt.Sprintf(" (not %s, which it does not let them answer on)", own[d.Person])
			}
			return fmt.Errorf("%s: on this route %s's direct messages go to %s, the first surface it lets them answer on%s, and %s, so they would wait in the outbox for ever: set %s, or change the route's deciders",
				key, d.Person, sf, by, notRunning(sf), surfaceSwitch[sf])
		}
	}
	return nil
}

// notRunning says that sf is not running here, and why.
func notRunning(sf core.Surface) string {
	return fmt.Sprintf("%s is not running here (%s is not set)", sf, surfaceSwitch[sf])
}

package app

import (
	"fmt"
	"slices"
	"strings"

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
// escalations to it), or a person's direct messages. The deliveries
// would be stored and never sent, while every ask succeeded and /readyz
// said ready. serve refuses such a file at start, and a reload refuses
// it as it refuses any bad file; the error names the key at fault and
// the variable that turns the surface on.
func checkSurfaces(f File, running map[core.Surface]bool) error {
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
	people, _ := f.peopleConfig()
	for _, name := range inOrder(people) {
		p := people[name]
		if sf := dmSurface(p); p.DM && sf != "" && !running[sf] {
			return fmt.Errorf("people.%s.dm: their direct messages go to %s, and %s, so they would wait in the outbox for ever: set %s, prefer a surface that runs (people.%s.prefer), or turn dm off",
				name, sf, notRunning(sf), surfaceSwitch[sf], name)
		}
	}
	// On a route that lets a person answer only on other surfaces than
	// their own for direct messages, theirs go to one of those (as core's
	// dmDeliveries sends them).
	for _, route := range inOrder(f.Routes) {
		r := f.Routes[route]
		named := routeMembers(f, r)
		for _, name := range inOrder(people) {
			p := people[name]
			if !p.DM {
				continue
			}
			sf, by := dmSurfaceOn(p, named[name], r)
			if sf == "" || running[sf] {
				continue
			}
			key := "routes." + route + ".people"
			if !named[name] {
				key = "routes." + route + ".deciders." + string(sf)
			}
			return fmt.Errorf("%s: on this route %s's direct messages go to %s, the first surface it lets them answer on%s, and %s, so they would wait in the outbox for ever: set %s, or change the route's deciders",
				key, name, sf, by, notRunning(sf), surfaceSwitch[sf])
		}
	}
	return nil
}

// notRunning says that sf is not running here, and why.
func notRunning(sf core.Surface) string {
	return fmt.Sprintf("%s is not running here (%s is not set)", sf, surfaceSwitch[sf])
}

// dmSurface is where p's direct messages go on a route that lets them
// answer everywhere: their preferred surface, else the first chat
// surface they have an id on (core.Person's own rule).
func dmSurface(p core.Person) core.Surface {
	if p.Prefer != "" {
		return p.Prefer
	}
	for _, sf := range core.ChatSurfaces {
		if len(p.IDs[sf]) > 0 {
			return sf
		}
	}
	return ""
}

// dmSurfaceOn is where p's direct messages on route r go, as core sends
// them: their DM surface if r lets them answer there, else the first chat
// surface that does; "" when none does, or when p is not among r's people
// at all (named: r's people entries name them). by says why, when it is
// not p's own DM surface.
func dmSurfaceOn(p core.Person, named bool, r RouteFile) (sf core.Surface, by string) {
	// listed: r's deciders on sf name id (email addresses in any case,
	// as core keeps them in lower case).
	listed := func(sf core.Surface, id string) bool {
		return slices.ContainsFunc(r.Deciders[string(sf)], func(e string) bool {
			return e == id || sf == core.SurfaceEmail && strings.EqualFold(e, id)
		})
	}
	may := func(sf core.Surface) bool {
		return len(p.IDs[sf]) > 0 && (named || listed(sf, "*") || listed(sf, p.IDs[sf][0]))
	}
	member := named
	for sf, ids := range p.IDs {
		for _, id := range ids {
			member = member || listed(sf, id)
		}
	}
	if !member {
		return "", ""
	}
	if own := dmSurface(p); own != "" && may(own) {
		return own, ""
	}
	for _, sf := range core.ChatSurfaces {
		if may(sf) {
			return sf, fmt.Sprintf(" (not %s, which it does not let them answer on)", dmSurface(p))
		}
	}
	return "", ""
}

// routeMembers is the people route r's people entries name (person:,
// group:); parseFile has checked that each exists.
func routeMembers(f File, r RouteFile) map[string]bool {
	out := map[string]bool{}
	for _, e := range r.People {
		switch {
		case strings.HasPrefix(e, core.PersonPrefix):
			out[strings.TrimPrefix(e, core.PersonPrefix)] = true
		case strings.HasPrefix(e, core.GroupPrefix):
			for _, n := range f.Groups[strings.TrimPrefix(e, core.GroupPrefix)] {
				out[n] = true
			}
		}
	}
	return out
}

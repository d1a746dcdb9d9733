package app

import (
	"errors"
	"fmt"
	"net/mail"
	"strings"

	"github.com/askbridge/askbridge/core"
)

// oneWayRooms are route r's email and ntfy recipients as rooms: each
// address or topic as written (addresses in lower case, as people's are
// kept), and "person:" and "group:" entries as they are, which core looks
// up whenever a card goes out (core.Route.Posts), so that a rotated topic
// or a changed group reaches the questions already open. An entry that
// names nobody, a person without an address or topic, and a malformed one
// stop the server with the key at fault.
func oneWayRooms(f File, key string, r RouteFile) ([]core.Room, error) {
	var out []core.Room
	seen := map[core.Room]bool{}
	add := func(sf core.Surface, id string) {
		room := core.Room{Surface: sf, ID: id}
		if !seen[room] {
			seen[room] = true
			out = append(out, room)
		}
	}
	for _, door := range []struct {
		sf      core.Surface
		entries []string
		own     func(PersonFile) string
		check   func(string) error
	}{
		{core.SurfaceEmail, r.Email, func(p PersonFile) string { return p.Email }, checkAddress},
		{core.SurfaceNtfy, r.Ntfy, func(p PersonFile) string { return p.Ntfy }, checkTopic},
	} {
		for i, e := range door.entries {
			at := fmt.Sprintf("%s.%s[%d]", key, door.sf, i)
			var names []string
			switch {
			case strings.HasPrefix(e, core.PersonPrefix):
				names = []string{strings.TrimPrefix(e, core.PersonPrefix)}
			case strings.HasPrefix(e, core.GroupPrefix):
				g, ok := f.Groups[strings.TrimPrefix(e, core.GroupPrefix)]
				if !ok {
					return nil, fmt.Errorf("%s: no group named %q", at, strings.TrimPrefix(e, core.GroupPrefix))
				}
				names = g
			default:
				if err := door.check(e); err != nil {
					return nil, fmt.Errorf("%s: %w", at, err)
				}
				if door.sf == core.SurfaceEmail {
					e = strings.ToLower(e)
				}
				add(door.sf, e)
				continue
			}
			for _, n := range names {
				p, ok := f.People[n]
				if !ok {
					return nil, fmt.Errorf("%s: no person named %q", at, n)
				}
				if door.own(p) == "" {
					return nil, fmt.Errorf("%s: person %q has no %s", at, n, door.sf)
				}
			}
			add(door.sf, e)
		}
	}
	return out, nil
}

// checkAddress accepts a bare email address: the recipient, and the id
// its links answer as. Its refusal names no value: the key names it, and
// the refusal of a reload goes to the event log, which observers read.
func checkAddress(s string) error {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s {
		return errors.New("not an email address (a bare address, such as ops@example.com)")
	}
	return nil
}

// checkTopic accepts what ntfy takes as a topic name: 1 to 64 of A-Z,
// a-z, 0-9, _ and -. Its refusal does not quote the value, which may
// hold the topic, a password on a public server.
func checkTopic(s string) error {
	if len(s) == 0 || len(s) > 64 || strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") != "" {
		return errors.New("not an ntfy topic (1-64 of A-Z, a-z, 0-9, _ and -; the topic's name, not its URL)")
	}
	return nil
}

package core

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Person is someone the configuration names once, with their accounts on
// every surface: a route can then name the person rather than each
// account, the event log names them by one pseudonym wherever they act,
// and a quorum counts them once however many surfaces they vote from.
type Person struct {
	// Name is how routes and groups refer to the person ("alice").
	Name string `json:"name"`
	// DisplayName is the name the operator vouches for; cards show it in
	// place of whatever the platform reports. It still reaches the agent
	// fenced, like every name (law 7).
	DisplayName string `json:"display_name,omitempty"`
	// IDs are the person's accounts: a user id on each chat surface, and
	// on the api and console surfaces the names of the tokens they sign
	// in with. Each id belongs to at most one person.
	IDs map[Surface][]string `json:"-"`
	// DM asks for new questions and reminders as a direct message too,
	// on Prefer (or the first chat surface they have an id on).
	DM     bool    `json:"dm,omitempty"`
	Prefer Surface `json:"prefer,omitempty"`
}

// Group names a set of people, so that a route can say "infra-leads".
type Group struct {
	Name    string   `json:"name"`
	Members []string `json:"members"`
}

// Entries of Route.People.
const (
	PersonPrefix = "person:"
	GroupPrefix  = "group:"
)

// directory is the configuration's people, indexed for the lookups the
// chokepoint makes on every act.
type directory struct {
	people map[string]Person
	groups map[string]Group
	// byID maps a surface and account id to the person it belongs to.
	byID map[Surface]map[string]string
}

// newDirectory checks people and groups and indexes them. Errors name what
// is wrong in the configuration's own terms: the id claimed twice and both
// people claiming it, the unknown member and its group. People, groups and
// a person's surfaces are checked in name order, so the error a
// configuration gets is the same on every start.
func newDirectory(people map[string]Person, groups map[string]Group) (directory, error) {
	d := directory{people: map[string]Person{}, groups: map[string]Group{}, byID: map[Surface]map[string]string{}}
	for _, name := range sortedKeys(people) {
		if err := d.addPerson(name, people[name]); err != nil {
			return d, err
		}
	}
	for _, name := range sortedKeys(groups) {
		if err := d.addGroup(name, groups[name]); err != nil {
			return d, err
		}
	}
	return d, nil
}

// addPerson checks person name and claims their accounts.
func (d *directory) addPerson(name string, p Person) error {
	p.Name = name
	if err := checkName("people", name); err != nil {
		return err
	}
	if err := checkLen("people", "people."+name+".name", p.DisplayName, MaxTitleLen); err != nil {
		return err
	}
	for _, surface := range sortedKeys(p.IDs) {
		if err := d.claim(name, surface, p.IDs[surface]); err != nil {
			return err
		}
	}
	if p.Prefer != "" {
		if !p.Prefer.IsChat() {
			return fmt.Errorf("people.%s.prefer: %q is not %s", name, p.Prefer, SurfaceNames(ChatSurfaces))
		}
		if len(p.IDs[p.Prefer]) == 0 {
			return fmt.Errorf("people.%s.prefer: %s, but no %s id is given", name, p.Prefer, p.Prefer)
		}
	}
	if p.DM && p.dmSurface() == "" {
		return fmt.Errorf("people.%s.dm: direct messages need an id on %s", name, SurfaceNames(ChatSurfaces))
	}
	d.people[name] = p
	return nil
}

// claim indexes person name's ids on surface, each id one person's.
func (d *directory) claim(name string, surface Surface, ids []string) error {
	if !slices.Contains(AnswerSurfaces, surface) {
		return fmt.Errorf("people.%s: %q is not %s", name, surface, SurfaceNames(AnswerSurfaces))
	}
	if surface.IsChat() && len(ids) > 1 {
		return fmt.Errorf("people.%s.%s: one account per chat surface, not %d", name, surface, len(ids))
	}
	for _, id := range ids {
		if strings.TrimSpace(id) == "" {
			return fmt.Errorf("people.%s.%s: an id is empty", name, surface)
		}
		if d.byID[surface] == nil {
			d.byID[surface] = map[string]string{}
		}
		if other, ok := d.byID[surface][id]; ok {
			if other == name {
				return fmt.Errorf("people.%s.%s: id %q is listed twice", name, surface, id)
			}
			return fmt.Errorf("people: %s id %q is claimed by both %q and %q", surface, id, other, name)
		}
		d.byID[surface][id] = name
	}
	return nil
}

// addGroup checks group name: at least one member, each a person, once.
func (d *directory) addGroup(name string, g Group) error {
	g.Name = name
	if err := checkName("groups", name); err != nil {
		return err
	}
	if len(g.Members) == 0 {
		return fmt.Errorf("groups.%s: a group needs at least one person", name)
	}
	seen := map[string]bool{}
	for _, m := range g.Members {
		if _, ok := d.people[m]; !ok {
			return fmt.Errorf("groups.%s: no person named %q", name, m)
		}
		if seen[m] {
			return fmt.Errorf("groups.%s: %q is listed twice", name, m)
		}
		seen[m] = true
	}
	g.Members = slices.Clone(g.Members)
	d.groups[name] = g
	return nil
}

func checkName(section, name string) error {
	if strings.TrimSpace(name) == "" || strings.ContainsAny(name, ": \t\n") || len(name) > MaxIDLen {
		return fmt.Errorf("%s: %q is not a name (no spaces or colons, at most %d bytes)", section, name, MaxIDLen)
	}
	return nil
}

// sortedKeys is m's keys in order: configuration is checked and listed
// in it, so that the same configuration gives the same refusal and the
// same lists on every start, not a map's order.
func sortedKeys[K ~string, V any](m map[K]V) []K { return slices.Sorted(maps.Keys(m)) }

// dmSurface is where the person's direct messages go.
func (p Person) dmSurface() Surface {
	if p.Prefer != "" {
		return p.Prefer
	}
	for _, s := range ChatSurfaces {
		if len(p.IDs[s]) > 0 {
			return s
		}
	}
	return ""
}

// dmSurfaceOn is where p's direct messages on route go: their DM
// surface when the route lets them answer there, else the first chat
// surface that does; false when none does (a card whose every button
// would refuse them is no use).
func (p Person) dmSurfaceOn(route Route) (Surface, bool) {
	may := func(sf Surface) bool {
		return len(p.IDs[sf]) > 0 && route.Allows(Decider{Surface: sf, ID: p.IDs[sf][0], Person: p.Name})
	}
	if sf := p.dmSurface(); sf != "" && may(sf) {
		return sf, true
	}
	for _, sf := range ChatSurfaces {
		if may(sf) {
			return sf, true
		}
	}
	return "", false
}

// DM is a surface that someone's direct messages go to under the
// configuration in force (Service.DMs).
type DM struct {
	Person string
	// Route is the route whose cards go there; "" for what goes to the
	// person whatever the route (their digests).
	Route   string
	Surface Surface
	// Own: Surface is the person's own DM surface (their preferred one,
	// else their first chat account); a route that does not let them
	// answer there sends theirs to another.
	Own bool
	// Named: the route's people entries name them; else only its
	// deciders do, by account.
	Named bool
}

// DMs are the surfaces direct messages go to under the configuration in
// force, as dmDeliveries and the digests send them: for each person who
// asked for them, their own DM surface, then on each route they are
// among the people of, the surface their cards go to there. A program
// refuses a configuration that sends any to a surface it does not run
// (their deliveries would wait for ever); this is the one statement of
// where they go.
func (s *Service) DMs() []DM {
	b := s.conf()
	var out []DM
	for _, name := range sortedKeys(b.dir.people) {
		if p := b.dir.people[name]; p.DM {
			out = append(out, DM{Person: name, Surface: p.dmSurface(), Own: true})
		}
	}
	for _, name := range sortedKeys(b.cfg.Routes) {
		route := b.cfg.Routes[name]
		for _, p := range s.routePeople(route) {
			if !p.DM {
				continue
			}
			if sf, ok := p.dmSurfaceOn(route); ok {
				out = append(out, DM{Person: p.Name, Route: name, Surface: sf, Own: sf == p.dmSurface(), Named: route.persons[p.Name]})
			}
		}
	}
	return out
}

// known is members for a route pinned on a question before a reload:
// entries naming a person or group the directory no longer has are
// left out, not an error, so one removed name does not shut out the
// route's other people.
func (d directory) known(entries []string) map[string]bool {
	out := map[string]bool{}
	for _, e := range entries {
		if m, err := d.members("", []string{e}); err == nil {
			maps.Copy(out, m)
		}
	}
	return out
}

// members expands a route's people entries ("person:alice",
// "group:infra-leads") into the set of person names they cover.
func (d directory) members(route string, entries []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, e := range entries {
		names, err := d.named(e)
		if err != nil {
			return nil, fmt.Errorf("routes.%s.people: %w", route, err)
		}
		for _, n := range names {
			out[n] = true
		}
	}
	return out, nil
}

// named is the person names entry covers: one for "person:alice", the
// members of "group:infra-leads".
func (d directory) named(e string) ([]string, error) {
	switch {
	case strings.HasPrefix(e, PersonPrefix):
		name := e[len(PersonPrefix):]
		if _, ok := d.people[name]; !ok {
			return nil, fmt.Errorf("no person named %q", name)
		}
		return []string{name}, nil
	case strings.HasPrefix(e, GroupPrefix):
		name := e[len(GroupPrefix):]
		g, ok := d.groups[name]
		if !ok {
			return nil, fmt.Errorf("no group named %q", name)
		}
		return g.Members, nil
	default:
		return nil, fmt.Errorf("%q is not person:<name> or group:<name>", e)
	}
}

// namesPeople reports whether a room's id names people ("person:alice",
// "group:infra-leads") rather than an address or topic.
func namesPeople(id string) bool {
	return strings.HasPrefix(id, PersonPrefix) || strings.HasPrefix(id, GroupPrefix)
}

// posts is rooms as cards go out now: each room that names people (an
// email or ntfy route's "person:carol", "group:leads") becomes each
// person's own address or topic as the directory has it, and a room
// named twice is one. It is looked up on every bind and, for a question
// asked under an older configuration, by RouteOf, never stored with the
// question: a topic rotated because it leaked, or someone taken out of a
// group, is no longer sent the questions still open. strict, for the
// configuration being bound, refuses what cannot be looked up; otherwise
// (a route pinned on a question) it is left out, as known leaves out
// removed people.
func (d directory) posts(route string, rooms []Room, strict bool) ([]Room, error) {
	out := make([]Room, 0, len(rooms))
	add := func(r Room) {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	for i, room := range rooms {
		if !namesPeople(room.ID) {
			add(room)
			continue
		}
		fail := func(format string, a ...any) error {
			if !strict {
				return nil
			}
			return fmt.Errorf("routes.%s.rooms[%d]: %s", route, i, fmt.Sprintf(format, a...))
		}
		if !room.Surface.RoomIsPersonal() {
			if err := fail("%s names people, which only email and ntfy rooms may (a person's own address or topic)", room.ID); err != nil {
				return nil, err
			}
			continue
		}
		names, err := d.named(room.ID)
		if err != nil {
			if err := fail("%v", err); err != nil {
				return nil, err
			}
			continue
		}
		for _, n := range names {
			ids := d.people[n].IDs[room.Surface]
			if len(ids) == 0 {
				if err := fail("person %q has no %s", n, room.Surface); err != nil {
					return nil, err
				}
				continue
			}
			add(Room{Surface: room.Surface, ID: ids[0]})
		}
	}
	return out, nil
}

// identified is a decider whose account identify has looked up: Person
// is the configuration's word, not a caller's. The permission check
// (Service.allowed) takes nothing else, so a raw platform account cannot
// reach a route's allowlist by accident, where a route that names only
// people would refuse the very person it names.
type identified struct{ Decider }

// identify is the one place a surface account becomes a person: every
// act goes through it before the permission check, so whatever an
// adapter passes in, Person is what the configuration says (never what a
// caller claims) and Name is the operator's trusted display name when
// there is one.
func (s *Service) identify(d Decider) identified {
	d.Person = ""
	dir := s.conf().dir
	name, ok := dir.byID[d.Surface][d.ID]
	if !ok || d.ID == "" {
		return identified{d}
	}
	d.Person = name
	if p := dir.people[name]; p.DisplayName != "" {
		d.Name = p.DisplayName
	}
	return identified{d}
}

// accounts are the deciders a person is on each surface they have an id
// on, identified, for checks that ask "may this person act anywhere?".
func (s *Service) accounts(person string) []identified {
	p, ok := s.Person(person)
	if !ok {
		return nil
	}
	var out []identified
	for _, sf := range AnswerSurfaces {
		for _, id := range p.IDs[sf] {
			out = append(out, s.identify(Decider{Surface: sf, ID: id}))
		}
	}
	return out
}

// Directory is the configuration's people and groups as GET /v1/people
// shows them: names, display names and which surfaces each person has an
// account on, never the platform ids themselves.
type Directory struct {
	People []PersonView `json:"people"`
	Groups []Group      `json:"groups"`
}

// PersonView is one person in a Directory.
type PersonView struct {
	Name        string    `json:"name"`
	DisplayName string    `json:"display_name,omitempty"`
	Surfaces    []Surface `json:"surfaces"`
	Groups      []string  `json:"groups,omitempty"`
	DM          bool      `json:"dm,omitempty"`
}

// People lists the configured people and groups, by name.
func (s *Service) People() Directory {
	out := Directory{People: []PersonView{}, Groups: []Group{}}
	groupsOf := map[string][]string{}
	dir := s.conf().dir
	for _, gname := range sortedKeys(dir.groups) {
		g := dir.groups[gname]
		out.Groups = append(out.Groups, Group{Name: g.Name, Members: slices.Clone(g.Members)})
		for _, m := range g.Members {
			groupsOf[m] = append(groupsOf[m], gname)
		}
	}
	for _, name := range sortedKeys(dir.people) {
		p := dir.people[name]
		v := PersonView{Name: name, DisplayName: p.DisplayName, Surfaces: []Surface{}, Groups: groupsOf[name], DM: p.DM}
		for _, sf := range AnswerSurfaces {
			if len(p.IDs[sf]) > 0 {
				v.Surfaces = append(v.Surfaces, sf)
			}
		}
		out.People = append(out.People, v)
	}
	return out
}

// Person returns a configured person.
func (s *Service) Person(name string) (Person, bool) {
	p, ok := s.conf().dir.people[name]
	return p, ok
}

// ValidatePeople checks people, groups, the routes' people entries and
// their quorum policies as New will, so that a program can refuse a bad
// configuration file at load with an error naming what is wrong.
func ValidatePeople(people map[string]Person, groups map[string]Group, routes map[string]Route) error {
	dir, err := newDirectory(people, groups)
	if err != nil {
		return err
	}
	for _, name := range sortedKeys(routes) {
		r := routes[name]
		r.Name = name
		if r.persons, err = dir.members(name, r.People); err != nil {
			return err
		}
		if err := checkQuorum(r); err != nil {
			return err
		}
	}
	return nil
}

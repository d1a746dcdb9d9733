package core

import (
	"slices"
)

// Waiting is who an open question waits on, for an operator who wants to
// see what is held up by whom (the console's People page). It reads the
// route as Service.allowed does, so it names exactly who may act.
type Waiting struct {
	// People are the configured people who may decide and have not
	// acted on it yet (voted, answered a part), by name.
	People []string
	// Accounts are accounts the route lists that belong to no person,
	// "<surface>:<id>", but a one-way door's recipient by the door alone
	// (RecipientLabel): whoever reads this may not learn an address, nor
	// a topic, which works as a password. Roles are "<surface> role
	// <name>"; Anyone are the surfaces where anyone signed in may decide.
	Accounts []string
	Roles    []string
	Anyone   []Surface
	// Tally is a quorum's progress, worded as cards word it (TallyOf);
	// nil without a quorum.
	Tally *Tally
	// Escalated: it was escalated, and the escalation route's deciders
	// are among the above.
	Escalated bool
}

// Nobody reports that nobody may decide it: its route lists no one, or
// is gone from the configuration.
func (w Waiting) Nobody() bool {
	return len(w.People)+len(w.Accounts)+len(w.Roles)+len(w.Anyone) == 0
}

// WaitingOn is who open question q waits on.
func (s *Service) WaitingOn(q *Question) Waiting {
	if q.Counted == nil {
		q = s.counted(q) // its tally as the chokepoint would count it now
	}
	w := Waiting{Tally: TallyOf(q)}
	routes := s.decidingRoutes(q) // its route as asked, across reloads, and its escalation's once escalated
	if len(routes) == 0 || !q.Open() {
		return w
	}
	w.Escalated = len(routes) > 1
	for _, r := range routes {
		for _, p := range s.routePeople(r) {
			if !s.actedAs(q, Decider{Person: p.Name}) {
				w.People = append(w.People, p.Name)
			}
		}
		for _, sf := range AnswerSurfaces {
			for _, e := range r.Deciders[sf] {
				switch entry := ParseDecider(e); {
				case entry.Anyone:
					w.Anyone = append(w.Anyone, sf)
				case entry.Role != "":
					w.Roles = append(w.Roles, string(sf)+" role "+entry.Role)
				default:
					d := s.identify(Decider{Surface: sf, ID: e}).Decider
					if d.Person != "" || s.actedAs(q, d) {
						continue
					}
					a := string(sf) + ":" + e
					if sf.RoomIsPersonal() {
						a = RecipientLabel(sf) // several on one door are then one entry (Compact below)
					}
					w.Accounts = append(w.Accounts, a)
				}
			}
		}
	}
	for _, l := range []*[]string{&w.People, &w.Accounts, &w.Roles} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	slices.Sort(w.Anyone)
	w.Anyone = slices.Compact(w.Anyone)
	return w
}

// RouteView is a configured route as an operator reads it: the route,
// the people it names with its groups expanded (and those whose accounts
// it lists), and its policy defaults spelt out.
type RouteView struct {
	Route
	Persons []string
	// MinQuorum is the route's quorum (1 when unset); DenyBy its deny
	// policy, veto when unset.
	MinQuorum int
	DenyBy    DenyPolicy
}

// Routes lists the configured routes by name.
func (s *Service) Routes() []RouteView {
	routes := s.conf().cfg.Routes
	out := make([]RouteView, 0, len(routes))
	for _, name := range sortedKeys(routes) { // one configuration throughout
		r := routes[name]
		v := RouteView{Route: r, MinQuorum: r.quorum(), DenyBy: r.Deny}
		if v.DenyBy == "" {
			v.DenyBy = DenyVeto
		}
		v.People = slices.Clone(r.People)
		for _, p := range s.routePeople(r) {
			v.Persons = append(v.Persons, p.Name)
		}
		out = append(out, v)
	}
	return out
}

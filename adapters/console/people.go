package console

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// maxWaitingScan bounds how many open questions the People page reads to
// tell who each waits on; beyond it the page says it counted only those.
const maxWaitingScan = 2000

// waitItem is one open question as the People page lists it under whoever
// it waits on.
type waitItem struct {
	ID           core.QuestionID
	Title, Route string
	Hard         bool
	// Escalated: its escalation route's deciders may answer it too.
	Escalated bool
	// Tally is a quorum's progress ("1 of 2 approvals: Bob"), a line
	// each, drawn apart (the names in them are people's); none without one.
	Tally []string
}

// waitList is whom (a person, a group, an account, a role, anyone on a
// surface) some open questions wait on.
type waitList struct {
	Name, Display string
	Detail        string // surfaces and groups, members, or the kind of entry
	Items         []waitItem
}

// routeRow is a route with its open questions counted.
type routeRow struct {
	core.RouteView
	Open     int
	Deciders []string // "<surface>: entries", in surface order
	// Rooms are where its cards go; a one-way door's recipients (people's
	// addresses and topics) are counted, not listed.
	Rooms []string
}

// people is the People page: who is configured, what each person, group
// and listed account is holding up, and each route's deciders and
// policies. Everyone signed in may read it, as they may every question:
// it shows what the configuration says, accounts as the routes list them,
// but not the people's own addresses on the one-way doors.
func (s *Server) people(w http.ResponseWriter, r *http.Request, sess *session) {
	open, truncated, err := s.scanOpen(r)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	wo := s.waitingOn(open)
	dir := s.svc.People()
	s.render(w, r, http.StatusOK, "people", s.page(sess, map[string]any{"Title": "People and routes",
		"People": peopleRows(dir, wo.byPerson), "Groups": groupRows(dir, wo.byPerson), "Others": wo.otherRows(),
		"Routes": s.routeRows(wo.routeOpen), "Open": len(open), "Truncated": truncated}))
}

// scanOpen reads the open questions, up to maxWaitingScan (truncated
// says it stopped there).
func (s *Server) scanOpen(r *http.Request) (open []*core.Question, truncated bool, err error) {
	cursor := ""
	for {
		qs, next, err := s.svc.ListOpen(r.Context(), cursor, 500)
		if err != nil {
			return nil, false, err
		}
		open = append(open, qs...)
		if next == "" {
			return open, false, nil
		}
		if len(open) >= maxWaitingScan {
			return open, true, nil
		}
		cursor = next
	}
}

// waiting is what the open questions wait on: per person (by name), per
// other entry (an account no person is configured for, a role, anyone on
// a surface, nobody), and how many are open per route.
type waiting struct {
	byPerson  map[string][]waitItem
	others    map[string]*waitList
	routeOpen map[string]int
}

// waitingOn sorts the open questions by whom each waits on (core's
// WaitingOn).
func (s *Server) waitingOn(open []*core.Question) waiting {
	wo := waiting{byPerson: map[string][]waitItem{}, others: map[string]*waitList{}, routeOpen: map[string]int{}}
	for _, q := range open {
		wt := s.svc.WaitingOn(q)
		it := waitItem{ID: q.ID, Title: firstLine(q.Text), Route: q.Route, Hard: q.Reversibility == core.HardToReverse, Escalated: wt.Escalated}
		if t := card.TallyOf(q); t != nil {
			it.Tally = t.Lines // its voters named as cards name them
		}
		wo.routeOpen[q.Route]++
		for _, p := range wt.People {
			wo.byPerson[p] = append(wo.byPerson[p], it)
		}
		for _, a := range wt.Accounts {
			wo.add(a, "an account no person is configured for", it)
		}
		for _, role := range wt.Roles {
			wo.add(role, "anyone holding the role", it)
		}
		for _, sf := range wt.Anyone {
			wo.add("anyone on "+string(sf), "every signed-in account that may answer", it)
		}
		if wt.Nobody() {
			wo.add("nobody", "its route names no decider, so only a timeout or a cancel will close it", it)
		}
	}
	return wo
}

// add lists it under the other entry key, described by detail.
func (wo waiting) add(key, detail string, it waitItem) {
	if wo.others[key] == nil {
		wo.others[key] = &waitList{Name: key, Detail: detail}
	}
	wo.others[key].Items = append(wo.others[key].Items, it)
}

// otherRows are the other entries, in name order.
func (wo waiting) otherRows() []waitList {
	var rest []waitList
	for _, k := range slices.Sorted(maps.Keys(wo.others)) {
		rest = append(rest, *wo.others[k])
	}
	return rest
}

// peopleRows are the configured people, each with the surfaces they are
// on, their groups and what waits on them.
func peopleRows(dir core.Directory, byPerson map[string][]waitItem) []waitList {
	var people []waitList
	for _, p := range dir.People {
		surfaces := make([]string, len(p.Surfaces))
		for i, sf := range p.Surfaces {
			surfaces[i] = string(sf)
		}
		detail := strings.Join(surfaces, ", ")
		if len(p.Groups) > 0 {
			detail += "; in " + strings.Join(p.Groups, ", ")
		}
		people = append(people, waitList{Name: p.Name, Display: p.DisplayName, Detail: detail, Items: byPerson[p.Name]})
	}
	return people
}

// groupRows are the configured groups, each with what waits on any of its
// members, each question once.
func groupRows(dir core.Directory, byPerson map[string][]waitItem) []waitList {
	var groups []waitList
	for _, g := range dir.Groups {
		seen := map[core.QuestionID]bool{}
		var items []waitItem
		for _, m := range g.Members {
			for _, it := range byPerson[m] {
				if !seen[it.ID] {
					seen[it.ID] = true
					items = append(items, it)
				}
			}
		}
		groups = append(groups, waitList{Name: g.Name, Detail: strings.Join(g.Members, ", "), Items: items})
	}
	return groups
}

// routeRows are the configured routes, each with its open questions
// counted (routeOpen), its deciders per surface and its rooms; a one-way
// door's recipients are counted (rooms) or named by the door (deciders),
// not listed.
func (s *Server) routeRows(routeOpen map[string]int) []routeRow {
	var routes []routeRow
	for _, rv := range s.svc.Routes() {
		row := routeRow{RouteView: rv, Open: routeOpen[rv.Name]}
		for _, sf := range core.AnswerSurfaces {
			if ds := shownDeciders(sf, rv.Deciders[sf]); len(ds) > 0 {
				row.Deciders = append(row.Deciders, string(sf)+": "+strings.Join(ds, ", "))
			}
		}
		row.Rooms = shownRooms(rv.Posts())
		routes = append(routes, row)
	}
	return routes
}

// shownDeciders words a route's decider entries on sf for anyone signed
// in, as core.WaitingOn does: an account by its id, but a one-way door's
// recipient (an address, or a topic that works as a password) by the
// door alone (core.RecipientLabel), once however many the route lists;
// "*" and roles as written.
func shownDeciders(sf core.Surface, entries []string) []string {
	if !sf.RoomIsPersonal() {
		return entries
	}
	var out []string
	for _, e := range entries {
		if core.ParseDecider(e).ID != "" {
			e = core.RecipientLabel(sf)
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// shownRooms words rooms for anyone signed in: a chat room by its id, a
// one-way door's recipients (people's addresses, and topics that work as
// passwords: core.Surface.RoomIsPersonal) counted per surface, not listed.
func shownRooms(rooms []core.Room) []string {
	var out []string
	personal := map[core.Surface]int{}
	for _, room := range rooms {
		if room.Surface.RoomIsPersonal() {
			personal[room.Surface]++
			continue
		}
		out = append(out, string(room.Surface)+" "+room.ID)
	}
	for _, sf := range core.ChatSurfaces {
		if n := personal[sf]; n > 0 {
			out = append(out, fmt.Sprintf("%s: %d %s", sf, n, map[bool]string{true: "recipient", false: "recipients"}[n == 1]))
		}
	}
	return out
}

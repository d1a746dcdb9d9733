package console

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/askbridge/askbridge/core"
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
	// Tally is a quorum's progress ("1 of 2 approvals: Bob"), "" without one.
	Tally string
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
	ctx := r.Context()
	var open []*core.Question
	cursor, truncated := "", false
	for {
		qs, next, err := s.svc.ListOpen(ctx, cursor, 500)
		if err != nil {
			s.internal(w, r, err)
			return
		}
		open = append(open, qs...)
		if next == "" {
			break
		}
		if len(open) >= maxWaitingScan {
			truncated = true
			break
		}
		cursor = next
	}
	byPerson := map[string][]waitItem{}
	others := map[string]*waitList{}
	routeOpen := map[string]int{}
	for _, q := range open {
		wt := s.svc.WaitingOn(q)
		title, _, _ := strings.Cut(q.Text, "\n")
		it := waitItem{ID: q.ID, Title: title, Route: q.Route, Hard: q.Reversibility == core.HardToReverse, Escalated: wt.Escalated}
		if wt.Tally != nil {
			it.Tally = strings.Join(wt.Tally.Lines, "; ")
		}
		routeOpen[q.Route]++
		for _, p := range wt.People {
			byPerson[p] = append(byPerson[p], it)
		}
		add := func(key, detail string) {
			if others[key] == nil {
				others[key] = &waitList{Name: key, Detail: detail}
			}
			others[key].Items = append(others[key].Items, it)
		}
		for _, a := range wt.Accounts {
			add(a, "an account no person is configured for")
		}
		for _, role := range wt.Roles {
			add(role, "anyone holding the role")
		}
		for _, sf := range wt.Anyone {
			add("anyone on "+string(sf), "every signed-in account that may answer")
		}
		if wt.Nobody() {
			add("nobody", "its route names no decider, so only a timeout or a cancel will close it")
		}
	}
	dir := s.svc.People()
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
	var rest []waitList
	for _, k := range slices.Sorted(maps.Keys(others)) {
		rest = append(rest, *others[k])
	}
	var routes []routeRow
	for _, rv := range s.svc.Routes() {
		row := routeRow{RouteView: rv, Open: routeOpen[rv.Name]}
		for _, sf := range core.AnswerSurfaces {
			if ds := rv.Deciders[sf]; len(ds) > 0 {
				row.Deciders = append(row.Deciders, string(sf)+": "+strings.Join(ds, ", "))
			}
		}
		private := map[core.Surface]int{}
		for _, room := range rv.Rooms {
			if room.Surface == core.SurfaceEmail || room.Surface == core.SurfaceNtfy {
				private[room.Surface]++
				continue
			}
			row.Rooms = append(row.Rooms, string(room.Surface)+" "+room.ID)
		}
		for _, sf := range []core.Surface{core.SurfaceEmail, core.SurfaceNtfy} {
			if n := private[sf]; n > 0 {
				row.Rooms = append(row.Rooms, fmt.Sprintf("%s: %d %s", sf, n, map[bool]string{true: "recipient", false: "recipients"}[n == 1]))
			}
		}
		routes = append(routes, row)
	}
	s.render(w, r, http.StatusOK, "people", s.page(sess, map[string]any{"Title": "People and routes",
		"People": people, "Groups": groups, "Others": rest, "Routes": routes, "Open": len(open), "Truncated": truncated}))
}

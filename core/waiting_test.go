package core_test

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/google/go-cmp/cmp"
)

// TestWaitingOnNamesWhoHasNotActed: a question on a route of people, an
// account, a role and anyone on the console waits on each of them; a
// vote takes its voter off the list and moves the quorum's tally.
func TestWaitingOnNamesWhoHasNotActed(t *testing.T) {
	people := map[string]core.Person{
		"alice": {IDs: ids("slack", "U-alice")},
		"bob":   {IDs: ids("slack", "U-bob")},
		"carol": {IDs: ids("discord", "3")},
	}
	groups := map[string]core.Group{"infra": {Members: []string{"bob", "carol"}}}
	routes := map[string]core.Route{
		"ops": {People: []string{"person:alice", "group:infra"}, Quorum: 2, Deciders: map[core.Surface][]string{
			core.SurfaceSlack: {"U-loner", "role:leads"}, core.SurfaceConsole: {"*"},
		}},
		"gone": {},
	}
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: routes, People: people, Groups: groups})
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Route: "ops", Text: "Ship?",
		Reversibility: core.Reversible, Tool: "deploy", Arguments: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := core.Waiting{People: []string{"alice", "bob", "carol"}, Accounts: []string{"slack:U-loner"},
		Roles: []string{"slack role leads"}, Anyone: []core.Surface{core.SurfaceConsole},
		Tally: &core.Tally{Needed: 2, Lines: []string{"0 of 2 approvals"}}}
	if d := cmp.Diff(want, svc.WaitingOn(q)); d != "" {
		t.Fatalf("before any vote (-want +got):\n%s", d)
	}
	if _, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, OptionID: core.ApproveOption,
		Decider: core.Decider{Surface: core.SurfaceSlack, ID: "U-bob"}}); err != nil {
		t.Fatal(err)
	}
	q, _ = svc.Get(t.Context(), q.ID)
	want.People, want.Tally = []string{"alice", "carol"}, &core.Tally{Needed: 2, Lines: []string{"1 of 2 approvals: U-bob"}}
	if d := cmp.Diff(want, svc.WaitingOn(q)); d != "" {
		t.Fatalf("after Bob's vote (-want +got):\n%s", d)
	}
	if w := svc.WaitingOn(&core.Question{Route: "gone", State: core.StateOpen}); !w.Nobody() {
		t.Fatalf("a route that names nobody waits on %+v", w)
	}
	var names []string
	for _, r := range svc.Routes() {
		names = append(names, r.Name)
		if r.Name == "ops" && (r.MinQuorum != 2 || r.DenyBy != core.DenyVeto || !cmp.Equal(r.Persons, []string{"alice", "bob", "carol"})) {
			t.Fatalf("ops reads as %+v", r)
		}
	}
	if !cmp.Equal(names, []string{"gone", "ops"}) {
		t.Fatalf("routes %v", names)
	}
}

// TestWaitingOnNamesAOneWayDoorByTheDoor: an ntfy topic (which works as a
// password) and an email address a route lists are waited on as the
// door's recipients, never by topic or address; two topics are one entry.
func TestWaitingOnNamesAOneWayDoorByTheDoor(t *testing.T) {
	routes := map[string]core.Route{"alerts": {Deciders: map[core.Surface][]string{
		core.SurfaceNtfy: {"infra-approvals-q8z2", "db-approvals-k3p1"}, core.SurfaceEmail: {"ops@corp.com"}, core.SurfaceSlack: {"U-pager"},
	}}}
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: routes})
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Route: "alerts", Text: "Page?",
		Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{core.RecipientLabel(core.SurfaceEmail), core.RecipientLabel(core.SurfaceNtfy), "slack:U-pager"}
	if d := cmp.Diff(want, svc.WaitingOn(q).Accounts); d != "" {
		t.Fatalf("accounts (-want +got):\n%s", d)
	}
}

// TestWaitingOnAfterEscalation: once a question is escalated, its
// escalation route's deciders are waited on too.
func TestWaitingOnAfterEscalation(t *testing.T) {
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	people := map[string]core.Person{"alice": {IDs: ids("slack", "U-alice")}, "dave": {IDs: ids("slack", "U-dave")}}
	routes := map[string]core.Route{
		"ops":    {People: []string{"person:alice"}, EscalateTo: "oncall"},
		"oncall": {People: []string{"person:dave"}},
	}
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: routes, People: people, Clock: clock})
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Route: "ops", Text: "Which?",
		Reversibility: core.Reversible, Timeout: time.Hour, OnTimeout: core.OnTimeoutEscalate})
	if err != nil {
		t.Fatal(err)
	}
	if w := svc.WaitingOn(q); w.Escalated || !cmp.Equal(w.People, []string{"alice"}) {
		t.Fatalf("before the deadline: %+v", w)
	}
	clock.Advance(time.Hour)
	if _, err := svc.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	q, _ = svc.Get(t.Context(), q.ID)
	if w := svc.WaitingOn(q); !w.Escalated || !cmp.Equal(w.People, []string{"alice", "dave"}) {
		t.Fatalf("after the escalation: %+v (renotified %d)", w, q.Renotified)
	}
}

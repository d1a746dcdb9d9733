package slack_test

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestEscalationGroupCountsOnceEscalated: a user group named only by the
// escalation route, which Slack will not list, holds up nobody's refusal
// while the question has not escalated (core does not ask the escalation
// route's deciders yet, so the group cannot be what lets them in): a
// stranger's click is refused and recorded as core refuses it. Once it
// has escalated the group may be what names them, so the clicker is told
// to try again and nothing is recorded; and when Slack lists the group,
// its member's click counts. Before, the stranger was told to try again
// before the escalation too, the adapter reading the escalation route's
// groups as if they already decided.
func TestEscalationGroupCountsOnceEscalated(t *testing.T) {
	const oncall = "S0ONCALL" // not listed by the fake until the end: no_such_subteam
	clock := core.NewSimClock(time.Now())
	e := newEnvRoutes(t, false, nil, map[string]core.Route{
		"ops": {Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: room}}, EscalateTo: "oncall",
			Deciders: map[core.Surface][]string{core.SurfaceSlack: {alice.ID, "role:" + group}}},
		"oncall": {Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: "C0ONCALL"}},
			Deciders: map[core.Surface][]string{core.SurfaceSlack: {"role:" + oncall}}},
	}, nil, clock)
	in := decision()
	in.Timeout, in.OnTimeout = time.Hour, core.OnTimeoutEscalate
	q := e.ask(in)
	card := e.card(q.ID)
	refusals := func() int {
		n := 0
		for _, ev := range coretest.EventsOf(t, e.svc, q.ID) {
			if ev.Kind == core.EventRefused {
				n++
			}
		}
		return n
	}

	e.click(mallory, card, button(t, card, core.RefOption, -1, 0))
	if note := e.note(mallory, 0); !strings.Contains(note, "not one of the people") || refusals() != 1 {
		t.Fatalf("before the escalation, the stranger was told %q; %d refusals recorded", note, refusals())
	}
	// Only the route's own group was looked up: Slack allows about 20
	// usergroups.users.list calls a minute, and the escalation route's
	// group could not have changed core's answer yet.
	if n := e.fake.Calls("usergroups.users.list"); n != 1 {
		t.Fatalf("before the escalation, %d user group lookups, want the route's own group's alone", n)
	}

	clock.Advance(time.Hour + time.Minute)
	if rep, err := e.svc.Tick(t.Context()); err != nil || rep.Escalated != 1 {
		t.Fatalf("tick: %+v %v", rep, err)
	}
	e.click(mallory, card, button(t, card, core.RefOption, -1, 0))
	if note := e.note(mallory, 1); !strings.Contains(note, "try again") || refusals() != 1 {
		t.Fatalf("once escalated, the clicker was told %q; %d refusals recorded", note, refusals())
	}

	e.fake.SetGroup(oncall, mallory.ID)
	e.click(mallory, card, button(t, card, core.RefOption, -1, 0))
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Decider.ID != mallory.ID {
		t.Fatalf("the on-call member's click: %s %+v", got.State, got.Resolution)
	}
}

// TestEscalationGroupHoldsUpNoOutsider: on a route open to "*", a user of
// another organisation is refused as "*" refuses them (it means our own
// workspace) even while a user group named only by the escalation route
// cannot be read: before the escalation, core asks nothing of that group,
// so it cannot be what names them. Once escalated it may be, and they are
// told to try again. Before, they were told to try again from the start.
func TestEscalationGroupHoldsUpNoOutsider(t *testing.T) {
	clock := core.NewSimClock(time.Now())
	e := newEnvRoutes(t, false, nil, map[string]core.Route{
		"ops": {Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: room}}, EscalateTo: "oncall",
			Deciders: map[core.Surface][]string{core.SurfaceSlack: {"*"}}},
		"oncall": {Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: "C0ONCALL"}},
			Deciders: map[core.Surface][]string{core.SurfaceSlack: {"role:S0ONCALL"}}}, // never listed
	}, nil, clock)
	e.fake.AddUser(vendor)
	in := decision()
	in.Timeout, in.OnTimeout = time.Hour, core.OnTimeoutEscalate
	q := e.ask(in)
	card := e.card(q.ID)
	e.click(vendor, card, button(t, card, core.RefOption, -1, 0))
	if note := e.note(vendor, 0); note != notADecider {
		t.Fatalf("before the escalation, the other workspace's clicker was told %q", note)
	}
	clock.Advance(time.Hour + time.Minute)
	if rep, err := e.svc.Tick(t.Context()); err != nil || rep.Escalated != 1 {
		t.Fatalf("tick: %+v %v", rep, err)
	}
	e.click(vendor, card, button(t, card, core.RefOption, -1, 0))
	if note := e.note(vendor, 1); !strings.Contains(note, "try again") {
		t.Fatalf("once escalated, the other workspace's clicker was told %q", note)
	}
	e.click(mallory, card, button(t, card, core.RefOption, -1, 0))
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Decider.ID != mallory.ID {
		t.Fatalf("our own member's click: %s %+v", got.State, got.Resolution)
	}
}

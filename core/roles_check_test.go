package core_test

import (
	"slices"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestRolesToCheckFollowTheDecidingRoutes: the roles a door must look a
// person up in are those of the question's route on that surface alone,
// until it escalates; then the escalation route's too, each once.
func TestRolesToCheckFollowTheDecidingRoutes(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Clock: clock, Routes: map[string]core.Route{
		"deploy": {Deciders: map[core.Surface][]string{
			core.SurfaceSlack:   {"U1", "role:S-leads"},
			core.SurfaceDiscord: {"role:D-ops"},
		}, EscalateTo: "oncall"},
		"oncall": {Deciders: map[core.Surface][]string{core.SurfaceSlack: {"role:S-oncall", "role:S-leads"}}},
	}})
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which?",
		Reversibility: core.Reversible, Route: "deploy", Timeout: time.Hour, OnTimeout: core.OnTimeoutEscalate})
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string, sf core.Surface, want ...string) {
		t.Helper()
		if got := svc.RolesToCheck(q, sf); !slices.Equal(got, want) {
			t.Errorf("%s, on %s: %q, want %q", when, sf, got, want)
		}
	}
	check("before it escalates", core.SurfaceSlack, "S-leads")
	check("before it escalates", core.SurfaceDiscord, "D-ops")
	check("before it escalates", core.SurfaceTelegram)
	clock.Advance(time.Hour + time.Minute)
	if rep, err := svc.Tick(ctx); err != nil || rep.Escalated != 1 {
		t.Fatalf("tick: %+v, %v", rep, err)
	}
	if q, err = svc.Get(ctx, q.ID); err != nil {
		t.Fatal(err)
	}
	check("once escalated", core.SurfaceSlack, "S-leads", "S-oncall")
	check("once escalated", core.SurfaceDiscord, "D-ops")
}

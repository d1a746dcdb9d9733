package core_test

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// A configuration with several bad routes is refused for the same one,
// the first by name, on every start (and so on every reload), not for
// whichever a map gave first.
func TestConfigNamesTheFirstBadRouteByName(t *testing.T) {
	st := coretest.OpenStore(t)
	bad := core.Route{StandingHours: -1}
	routes := map[string]core.Route{"d": bad, "b": bad, "c": bad, "a": {EscalateTo: "nowhere"}, "e": bad}
	for range 30 {
		_, err := core.New(st, core.Config{ActorKey: []byte("k"), Routes: routes}, nil)
		if err == nil || !strings.HasPrefix(err.Error(), `core: route "a": escalate_to`) {
			t.Fatalf("error %v, want route a's", err)
		}
	}
}

// TestConfigRefusesDurationsThatCannotWork: a negative retention (whose
// purge would take every closed question at once), timeout or threshold
// is refused, and so is a default timeout above the max, which would
// refuse every ask naming none; a max timeout set alone below the default
// caps the default. Before, each was taken, and went wrong later.
func TestConfigRefusesDurationsThatCannotWork(t *testing.T) {
	st := coretest.OpenStore(t)
	for name, cfg := range map[string]core.Config{
		"negative retention":          {Retention: -time.Hour},
		"negative max timeout":        {MaxTimeout: -time.Hour},
		"negative default timeout":    {DefaultTimeout: -time.Hour},
		"negative downtime threshold": {DowntimeThreshold: -time.Minute},
		"default above max":           {DefaultTimeout: 2 * time.Hour, MaxTimeout: time.Hour},
	} {
		cfg.ActorKey = []byte("k")
		if _, err := core.New(st, cfg, nil); err == nil {
			t.Errorf("%s: taken", name)
		}
	}
	svc, err := core.New(st, core.Config{ActorKey: []byte("k"), MaxTimeout: 12 * time.Hour, Routes: coretest.APIRoutes()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: "agent-a", RunID: "run-1", Text: "Which?", Reversibility: core.Reversible})
	if err != nil || q.Deadline.Sub(q.CreatedAt) != 12*time.Hour {
		t.Errorf("an ask naming no timeout under max_timeout 12h: %+v, %v; want a 12h deadline", q, err)
	}
}

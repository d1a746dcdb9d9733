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
		"retention of seconds":        {Retention: 30 * time.Second},
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

// TestConfigRefusesARuleQuorumItsRouteCannotTake: a rule's quorum outside
// what the route it asks on allows is refused at load, naming the rule;
// before, the configuration loaded and every call the rule matched was
// refused at the ask.
func TestConfigRefusesARuleQuorumItsRouteCannotTake(t *testing.T) {
	st := coretest.OpenStore(t)
	accounts := map[core.Surface][]string{core.SurfaceSlack: {"U1", "U2"}}
	for want, routes := range map[string]map[string]core.Route{
		`routes.a.rules[0].quorum: 2 is outside what route "a" allows: 1 to 1`: {
			"a": {Deciders: accounts, Rules: []core.Rule{{When: "true", Quorum: 2}}}},
		`routes.a.rules[0].quorum: 1 is outside what route "b" allows: 2 to 3`: {
			"a": {Deciders: accounts, Rules: []core.Rule{{When: "true", Quorum: 1, Route: "b"}}},
			"b": {Deciders: accounts, Quorum: 2, MaxQuorum: 3}},
	} {
		if _, err := core.New(st, core.Config{ActorKey: []byte("k"), Routes: routes}, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
	ok := map[string]core.Route{"a": {Deciders: accounts, MaxQuorum: 2, Rules: []core.Rule{{When: "true", Quorum: 2}}}}
	if _, err := core.New(st, core.Config{ActorKey: []byte("k"), Routes: ok}, nil); err != nil {
		t.Errorf("a rule's quorum within its route's max_quorum: %v", err)
	}
}

// TestConfigRefusesADowntimeThresholdWithinTwoHeartbeats: a downtime
// threshold below twice the heartbeat interval is refused, naming the
// minimum. Before, any non-negative one was taken, and under one a
// graceful restart of a second, or a beat a little late, counted as a
// downtime and re-notified every open question.
func TestConfigRefusesADowntimeThresholdWithinTwoHeartbeats(t *testing.T) {
	st := coretest.OpenStore(t)
	least := 2 * core.HeartbeatInterval
	for _, d := range []time.Duration{time.Millisecond, time.Second, core.HeartbeatInterval, least - time.Millisecond} {
		_, err := core.New(st, core.Config{ActorKey: []byte("k"), DowntimeThreshold: d}, nil)
		if err == nil || !strings.Contains(err.Error(), "at least "+least.String()) {
			t.Errorf("downtime threshold %s: %v, want a refusal naming the minimum %s", d, err, least)
		}
	}
	if _, err := core.New(st, core.Config{ActorKey: []byte("k"), DowntimeThreshold: least}, nil); err != nil {
		t.Errorf("downtime threshold %s: %v", least, err)
	}
}

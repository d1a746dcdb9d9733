package core_test

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestConfiguredTimeoutsHaveTheDoorsFloor: a timeout the configuration
// sets in the asker's place (a policy rule's, policies.default_timeout)
// or caps it with (policies.max_timeout) is held to the floor the agent
// doors hold an asker's timeout to (core.MinAskTimeout), and refused at
// load with an error naming it. Before, a rule's "timeout: 500ms" (a
// unit slipped: minutes meant) loaded, and every call it matched timed
// out at the next tick, its cards sent for nothing; so did every ask
// naming no timeout under a default of 500ms.
func TestConfiguredTimeoutsHaveTheDoorsFloor(t *testing.T) {
	st := coretest.OpenStore(t)
	floor := core.MinAskTimeout.String()
	for _, c := range []struct {
		name string
		cfg  core.Config
		want string
	}{
		{"a rule's", core.Config{Routes: map[string]core.Route{"ops": {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}},
			Rules: []core.Rule{{When: "true", Timeout: 500 * time.Millisecond}}}}},
			`routes.ops.rules[0].timeout: 500ms is shorter than the minimum, ` + floor},
		{"the default", core.Config{DefaultTimeout: 500 * time.Millisecond},
			`the default timeout: 500ms is shorter than the minimum, ` + floor},
		{"the max", core.Config{MaxTimeout: time.Millisecond},
			`the max timeout: 1ms is shorter than the minimum, ` + floor},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.ActorKey = []byte("k")
			if _, err := core.New(st, c.cfg, nil); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("New: %v; want an error containing %q", err, c.want)
			}
		})
	}
	// The floor itself is taken, by a rule and as the default.
	ok := core.Config{ActorKey: []byte("k"), DefaultTimeout: core.MinAskTimeout, Routes: map[string]core.Route{"ops": {
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}, Rules: []core.Rule{{When: "true", Timeout: core.MinAskTimeout}}}}}
	if _, err := core.New(st, ok, nil); err != nil {
		t.Fatalf("timeouts of exactly %s: %v", core.MinAskTimeout, err)
	}
}

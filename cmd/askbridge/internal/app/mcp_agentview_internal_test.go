package app

import (
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// TestAgentViewKeepsWhoClosed: the stdio MCP door rebuilds a question
// from the agent's view, and what closed it is read from that
// (core.CloserOf) by the door's wording: a standing approval or a policy
// rule must not read as a person's answer (law 12). Before, the rebuilt
// resolution dropped ClosedBy, and each of these read as a person's.
func TestAgentViewKeepsWhoClosed(t *testing.T) {
	for _, by := range []core.Closer{core.CloserStanding, core.CloserPolicy, core.CloserQuorum} {
		v := &client.AgentQuestion{State: core.StateAnswered,
			Resolution: &client.AgentResolution{State: core.StateAnswered, ClosedBy: by, Surface: core.SurfaceSystem}}
		if got := core.CloserOf(fromAgentView(v)); got != by {
			t.Errorf("closed by %s: read as %s", by, got)
		}
	}
}

package storetest

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

func init() {
	register("RunLongStandingApprovalRefusedOnceItsRunEnded", testStandingAfterRunEnd)
}

// testStandingAfterRunEnd: a run-long standing approval whose run is
// already marked ended is refused, as conflict, and never listed. An
// approve that closed a question just before its run ended stores its
// grant after the close; a grant that lands after EndRun's last sweep of
// the run's approvals would otherwise stand, listed and unended, for
// good. Before, the store took it and listed it until revoked. An
// agent-wide approval of the same agent, and the run-long one of
// another agent's run of the same name, are stored as ever.
func testStandingAfterRunEnd(t *testing.T, h Harness) {
	ctx := t.Context()
	s := h.Open(t)
	t.Cleanup(func() { s.Close() })
	ended := core.Run{Agent: "agent-a", ID: "run-1"}
	if _, err := s.EndRun(ctx, ended.Key(), epoch); err != nil {
		t.Fatal(err)
	}
	at := epoch.Add(time.Second)
	grant := func(id string, scope core.StandingScope, agent core.AgentID, run core.RunID) core.Standing {
		st := core.Standing{ID: id, Scope: scope, Agent: agent, RunID: run, Tool: "write_file", Route: "ops",
			QuestionID: "q-" + core.QuestionID(id), GrantedBy: apiDecider("alice"), GrantedAt: at}
		if scope == core.StandingAgent {
			st.Until = at.Add(time.Hour)
		}
		return st
	}
	late := grant("st-late", core.StandingRun, ended.Agent, ended.ID)
	if err := s.PutStanding(ctx, late); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("a run-long standing approval for the ended run: %v; want it refused as conflict", err)
	}
	for _, st := range []core.Standing{
		grant("st-agent", core.StandingAgent, ended.Agent, ""),
		grant("st-other", core.StandingRun, "agent-b", ended.ID),
	} {
		if err := s.PutStanding(ctx, st); err != nil {
			t.Fatalf("standing approval %s: %v", st.ID, err)
		}
	}
	all, err := s.ListStandings(ctx, at)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, st := range all {
		ids = append(ids, st.ID)
	}
	if len(ids) != 2 || ids[0] != "st-agent" || ids[1] != "st-other" {
		t.Fatalf("listed %v; want st-agent and st-other, not the ended run's", ids)
	}
	// Nor is one left behind that a sweep of the run would end.
	if gone, err := s.EndRunStandings(ctx, ended.Key()); err != nil || len(gone) != 0 {
		t.Fatalf("the ended run's standing approvals: %+v, %v; want none", gone, err)
	}
}

package client_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestAStandingApprovedCallReadsAsTheBridges: a batch call a standing
// approval decided at the ask reads, in the agent's view, as decided on
// the system surface, as its resolution does: nobody acted on it, and the
// grantor's own surface is not the agent's to know. Before, it read as
// the grantor's surface.
func TestAStandingApprovedCallReadsAsTheBridges(t *testing.T) {
	ctx := t.Context()
	svc, _ := coretest.Open(t, coretest.Options{})
	bob := core.Decider{Surface: core.SurfaceAPI, ID: "bob", Name: "Bob"}
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", Text: "Write?", Reversibility: core.Reversible,
		Tool: "write_file", Arguments: json.RawMessage(`{"path":"a"}`), Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: bob, OptionID: core.ApproveOption, Standing: &core.StandingRequest{Scope: core.StandingRun}}); err != nil {
		t.Fatal(err)
	}
	b, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", Text: "Write both?", Reversibility: core.Reversible, Timeout: time.Hour,
		Calls: []core.CallInput{{ToolCallID: "c1", Tool: "write_file", Arguments: json.RawMessage(`{"path":"x"}`)},
			{ToolCallID: "c2", Tool: "write_file", Arguments: json.RawMessage(`{"path":"y"}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ = svc.Get(ctx, b.ID)
	v := client.AgentView(b)
	if len(v.Answers) != 2 {
		t.Fatalf("the batch's answers: %+v", v.Answers)
	}
	for _, a := range v.Answers {
		if a.StandingID == "" || a.Surface != core.SurfaceSystem {
			t.Errorf("call %s decided by standing approval %s at the ask reads as decided on surface %q; the resolution says %q", a.ItemID, a.StandingID, a.Surface, v.Resolution.Surface)
		}
	}
}

package core_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// endsRunFirst is a store whose standing approvals are written only
// after their run has ended, all of it (the mark, its sweeps of the run's
// approvals, the journal dropped): an approve's grant, which follows its
// close, losing the race with EndRun.
type endsRunFirst struct {
	core.Store
	svc **core.Service
}

func (s endsRunFirst) PutStanding(ctx context.Context, st core.Standing) error {
	if st.Scope == core.StandingRun {
		if _, err := (*s.svc).EndRun(ctx, core.Run{Agent: st.Agent, ID: st.RunID}); err != nil {
			return err
		}
	}
	return s.Store.PutStanding(ctx, st)
}

// TestARunLongGrantAfterItsRunEndedIsRefused: an approve that closed a
// question just before its run ended, and whose run-long standing
// approval reaches the store once EndRun is done, grants nothing, for a
// single call and for a batch's: nothing is listed, the approver is told
// only the approve counted, and the question's log says why. Before, the
// grant was stored after EndRun's last sweep of the run: listed for
// good, with no standing_ended event, until someone revoked it.
func TestARunLongGrantAfterItsRunEndedIsRefused(t *testing.T) {
	var svc *core.Service
	st := endsRunFirst{Store: coretest.OpenStore(t), svc: &svc}
	svc = coretest.Service(t, st, coretest.Options{Routes: coretest.APIRoutes()})
	ctx := t.Context()
	run := core.StandingRequest{Scope: core.StandingRun}
	for i, batch := range []bool{false, true} {
		in := core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: core.RunID("run-" + string(rune('1'+i))),
			Text: "Run it?", Reversibility: core.Reversible, Tool: "shell", Arguments: json.RawMessage(`{"command":"ls"}`)}
		answer := core.AnswerInput{Decider: ops, OptionID: core.ApproveOption, Standing: &run}
		if batch {
			in.Tool, in.Arguments = "", nil
			in.Calls = []core.CallInput{{ToolCallID: "a", Tool: "shell", Arguments: json.RawMessage(`{"command":"ls"}`)},
				{ToolCallID: "b", Tool: "shell", Arguments: json.RawMessage(`{"command":"pwd"}`)}}
			answer.OptionID, answer.Standing = "", nil
			answer.Calls = []core.CallDecision{{ToolCallID: "a", OptionID: core.ApproveOption, Standing: &run},
				{ToolCallID: "b", OptionID: core.ApproveOption}}
		}
		q, err := svc.Ask(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		answer.QuestionID = q.ID
		o, err := svc.Answer(ctx, answer)
		if err != nil || !o.Closed || o.Standing != nil || len(o.Standings) != 0 {
			t.Fatalf("batch %v: the approve: %+v, %v; want it recorded and no standing approval said to be granted", batch, o, err)
		}
		if !batch && o.Question.Resolution.Grants != nil {
			t.Errorf("the question handed back grants %+v", o.Question.Resolution.Grants)
		}
		if live, err := svc.ListStandings(ctx); err != nil || len(live) != 0 {
			t.Fatalf("batch %v: standing approvals listed: %+v, %v; want none", batch, live, err)
		}
		var why []string
		for _, e := range coretest.EventsOf(t, st, q.ID) {
			switch e.Kind {
			case core.EventStandingGranted, core.EventStandingEnded:
				t.Errorf("batch %v: logged %s: %s", batch, e.Kind, e.Reason)
			case core.EventRefused:
				why = append(why, e.Reason)
			}
		}
		if len(why) != 1 || !strings.Contains(why[0], "standing approval") || !strings.Contains(why[0], string(in.RunID)+" has ended") {
			t.Errorf("batch %v: refusals logged %q; want one saying the run had ended", batch, why)
		}
	}
}

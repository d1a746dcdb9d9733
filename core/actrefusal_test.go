package core_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestActRefusalIsTheActsOwnRefusal: for every button of an escalated
// approval and of an escalated batch, ActRefusal refuses exactly the
// acts the chokepoint then refuses for who is acting (CodeForbidden),
// and records nothing: alice, deploy's own decider, may do all of them;
// boss, whom only the escalation let in, all but grant a standing
// approval (for the call, or for one call of the batch); carol none.
func TestActRefusalIsTheActsOwnRefusal(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Clock: clock, Routes: map[string]core.Route{
		"deploy": {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"alice"}}, EscalateTo: "oncall", StandingHours: 8},
		"oncall": {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"boss"}}},
	}})
	all := &core.Editable{All: true}
	asks := map[string]core.AskInput{
		"approval": {Kind: core.KindApproval, Text: "Restart?", Tool: "restart", Arguments: []byte(`{"svc":"web"}`), Editable: all},
		"batch": {Kind: core.KindApproval, Text: "Restart both?", Calls: []core.CallInput{
			{ToolCallID: "c1", Tool: "restart", Arguments: []byte(`{"svc":"web"}`), Editable: all},
			{ToolCallID: "c2", Tool: "restart", Arguments: []byte(`{"svc":"api"}`), Editable: all}}},
	}
	n := 0
	ask := func(in core.AskInput) *core.Question {
		n++ // an agent of its own: no standing approval granted before covers it
		in.Route, in.Agent, in.RunID, in.Reversibility = "deploy", core.AgentID(fmt.Sprint("bot-", n)), "r", core.Reversible
		in.Timeout, in.OnTimeout = time.Hour, core.OnTimeoutEscalate
		q, err := svc.Ask(ctx, in)
		if err != nil || !q.Open() {
			t.Fatalf("ask: %+v, %v", q, err)
		}
		clock.Advance(time.Hour + time.Minute)
		if rep, err := svc.Tick(ctx); err != nil || rep.Escalated != 1 {
			t.Fatalf("tick: %+v, %v", rep, err)
		}
		q, err = svc.Get(ctx, q.ID)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	refusedStanding := 0
	for name, in := range asks {
		var refs []core.Ref
		shown := card.New(ask(in), core.MessageRef{Kind: core.DeliverPost})
		for _, s := range shown.Sections {
			for _, a := range s.Actions {
				refs = append(refs, a.Ref)
			}
		}
		for _, a := range shown.Actions {
			refs = append(refs, a.Ref)
		}
		for _, who := range []string{"alice", "boss", "carol"} {
			for _, r := range refs {
				q := ask(in)
				r.QuestionID = q.ID
				d := core.Decider{Surface: core.SurfaceAPI, ID: who}
				before := len(coretest.EventsOf(t, svc, q.ID))
				refused := svc.ActRefusal(q, r, d)
				if got := len(coretest.EventsOf(t, svc, q.ID)); got != before {
					t.Fatalf("ActRefusal recorded %d events", got-before)
				}
				var err error
				if r.Action == core.RefDecline {
					_, err = svc.Decline(ctx, q.ID, d)
				} else {
					text := ""
					if r.Action == core.RefEdit {
						text = `{"svc":"db"}`
					}
					var ain core.AnswerInput
					if ain, err = core.AnswerFor(q, r, d, text); err == nil {
						_, err = svc.Answer(ctx, ain)
					}
				}
				forbidden := core.ErrorCode(err) == core.CodeForbidden
				if (refused != nil) != forbidden || refused != nil && core.ErrorCode(refused) != core.CodeForbidden {
					t.Errorf("%s, %s %q: ActRefusal %v; the act %v", name, who, r.Encode(), refused, err)
				}
				if err != nil && !forbidden {
					t.Errorf("%s, %s %q: the act failed for another cause: %v", name, who, r.Encode(), err)
				}
				if want := who == "carol" || who == "boss" && r.Action == core.RefStanding; forbidden != want {
					t.Errorf("%s, %s %q: refused %v, want %v", name, who, r.Encode(), forbidden, want)
				}
				if who == "boss" && r.Action == core.RefStanding && refused != nil {
					refusedStanding++
				}
			}
		}
	}
	if refusedStanding < 3 { // the approval's two, and one per call of the batch
		t.Fatalf("boss was refused %d standing approvals", refusedStanding)
	}
}

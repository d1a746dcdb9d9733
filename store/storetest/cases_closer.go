package storetest

import (
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

func init() {
	registerDomain("EveryCloseRecordsItsCloser", testClosers)
}

// testClosers closes a question in every way the bridge can, each through
// the service as the bridge does it, and reads them back after a
// restart: each resolution records who or what closed it, and the resume
// is worded from that (law 12).
func testClosers(t *testing.T, h Harness) {
	e := newEnv(t, h)
	ctx := t.Context()
	want := map[core.QuestionID]core.Closer{}
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	q := e.ask(clarification("run-1"))
	_, err := e.svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: apiDecider("op"), Text: "eu-west"})
	check("answer", err)
	want[q.ID] = core.CloserPerson

	q = e.ask(approvalOn("two"))
	_, err = e.vote(q.ID, aliceOn(core.SurfaceSlack), core.ApproveOption, "")
	check("first vote", err)
	_, err = e.vote(q.ID, bobTelegram, core.ApproveOption, "")
	check("second vote", err)
	want[q.ID] = core.CloserQuorum

	q = e.ask(form())
	_, err = e.svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: apiDecider("a"), Items: []core.ItemInput{{ItemID: "day", OptionID: "mon"}}})
	check("first item", err)
	_, err = e.svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: apiDecider("b"), Items: []core.ItemInput{{ItemID: "notes", OptionID: "short"}}})
	check("second item", err)
	want[q.ID] = core.CloserParts

	people := e.ask(batch(2))
	_, err = e.all(people.ID, "op", core.ApproveOption)
	check("approve all", err)
	want[people.ID] = core.CloserParts

	late := e.ask(batch(2))
	_, err = e.decide(late.ID, "op", core.CallDecision{ToolCallID: late.Calls[0].ToolCallID, OptionID: core.ApproveOption})
	check("one call", err)
	e.clock.Advance(core.DefaultTimeout + 1)
	_, err = e.svc.Tick(ctx)
	check("tick", err)
	want[late.ID] = core.CloserTimeout

	q = e.ask(writeCall("run-1", "/srv/a"))
	e.approveStanding(q.ID, core.StandingRequest{Scope: core.StandingRun})
	want[q.ID] = core.CloserPerson
	q = e.ask(writeCall("run-1", "/srv/b"))
	want[q.ID] = core.CloserStanding
	standing := e.ask(batch(2))
	want[standing.ID] = core.CloserParts

	q = e.ask(clarification("run-1"))
	_, err = e.svc.Decline(ctx, q.ID, apiDecider("op"))
	check("decline", err)
	want[q.ID] = core.CloserDecline

	q = e.ask(clarification("run-1"))
	_, err = e.svc.Cancel(ctx, core.CancelInput{QuestionID: q.ID, By: agentDecider("agent-a"), Owner: "agent-a"})
	check("agent's cancel", err)
	want[q.ID] = core.CloserAgentCancel

	q = e.ask(clarification("run-1"))
	_, err = e.svc.Cancel(ctx, core.CancelInput{QuestionID: q.ID, By: apiDecider("op")})
	check("operator's cancel", err)
	want[q.ID] = core.CloserOperatorCancel

	q = e.ask(clarification("run-closer"))
	_, err = e.svc.EndRun(ctx, core.Run{Agent: "agent-a", ID: "run-closer"})
	check("end run", err)
	want[q.ID] = core.CloserExpiry

	e.restart()
	for id, closer := range want {
		got := e.get(id)
		if got.Resolution == nil || got.Resolution.ClosedBy != closer {
			t.Errorf("question %s (%s): closed by %+v, want %s", id, got.State, got.Resolution, closer)
		}
		if _, err := core.ResumeOf(got); err != nil {
			t.Errorf("question %s: %v", id, err)
		}
	}
	for id, open := range map[core.QuestionID]string{
		standing.ID: "A standing approval decided every call of this batch at once; no human looked at them.",
		late.ID:     "The deadline passed after 1 of the 2 tool calls of this batch had been decided; nobody decided the rest.",
		people.ID:   "A human decided every call of this batch; each call below names them.",
	} {
		r, err := core.ResumeOf(e.get(id))
		check("resume", err)
		p, err := fence.ParseResume(r.Text)
		check("parse", err)
		if p.Lines[1] != open {
			t.Errorf("question %s opens %q, want %q", id, p.Lines[1], open)
		}
	}
}

package core_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
	"github.com/askbridge/askbridge/internal/coretest"
)

// notApproved is the trusted line every resume of a single approval that
// did not approve its call carries.
const notApproved = "The gated tool call was not approved: do not make it."

// TestAnApprovalThatWasNotApprovedSaysDoNotMakeIt: however a single
// approval closes without an approve (declined, timed out, withdrawn by
// an operator, the agent or askbridge, expired with its run, or a quorum
// one vote short when time ran out), its resume says, in a trusted line, that the
// call was not approved and must not be made; a decline tells the agent
// to go on without it. Before, a decline resumed with "Proceed on your
// own best judgement" and nothing else, the other closes said nothing of
// the call at all, and the short quorum's only verdict-like word was a
// voter's fenced "approve".
func TestAnApprovalThatWasNotApprovedSaysDoNotMakeIt(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	routes := coretest.APIRoutes()
	r := routes[core.DefaultRoute]
	r.MaxQuorum = 2
	routes[core.DefaultRoute] = r
	svc, _ := coretest.Open(t, coretest.Options{Routes: routes, Clock: clock})
	ops := core.Decider{Surface: core.SurfaceAPI, ID: "ops", Name: "Ops"}
	bob := core.Decider{Surface: core.SurfaceAPI, ID: "bob", Name: "Bob"}
	timeOut := func(t *testing.T, q *core.Question) {
		clock.Advance(2 * time.Hour)
		if _, err := svc.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		quorum int
		close  func(t *testing.T, q *core.Question)
		state  core.State
	}{
		{"declined", 0, func(t *testing.T, q *core.Question) {
			if _, err := svc.Decline(ctx, q.ID, ops); err != nil {
				t.Fatal(err)
			}
		}, core.StateDeclined},
		{"timed out", 0, timeOut, core.StateTimedOut},
		{"withdrawn by an operator", 0, func(t *testing.T, q *core.Question) {
			if _, err := svc.Cancel(ctx, core.CancelInput{QuestionID: q.ID, By: ops, Reason: "later"}); err != nil {
				t.Fatal(err)
			}
		}, core.StateCancelled},
		{"withdrawn by the agent", 0, func(t *testing.T, q *core.Question) {
			by := core.Decider{Surface: core.SurfaceAgent, ID: string(q.Agent)}
			if _, err := svc.Cancel(ctx, core.CancelInput{QuestionID: q.ID, By: by, Owner: q.Agent}); err != nil {
				t.Fatal(err)
			}
		}, core.StateCancelled},
		{"withdrawn by askbridge for the agent", 0, func(t *testing.T, q *core.Question) {
			if _, err := svc.Cancel(ctx, core.CancelInput{QuestionID: q.ID, By: core.System, Owner: q.Agent, Reason: "no answer in time"}); err != nil {
				t.Fatal(err)
			}
		}, core.StateCancelled},
		{"expired with its run", 0, func(t *testing.T, q *core.Question) {
			if _, err := svc.EndRun(ctx, q.Run()); err != nil {
				t.Fatal(err)
			}
		}, core.StateExpired},
		{"a quorum one approve short at the deadline", 2, func(t *testing.T, q *core.Question) {
			if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: bob, OptionID: core.ApproveOption, Text: "fine by me"}); err != nil {
				t.Fatal(err)
			}
			timeOut(t, q)
		}, core.StateTimedOut},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: core.RunID("run-" + strings.ReplaceAll(tc.name, " ", "-")),
				Text: "Drop it?", Reversibility: core.HardToReverse, Tool: "drop_table", Arguments: json.RawMessage(`{"table":"users"}`),
				Timeout: time.Hour, Quorum: tc.quorum})
			if err != nil {
				t.Fatal(err)
			}
			tc.close(t, q)
			got, err := svc.Get(ctx, q.ID)
			if err != nil || got.State != tc.state {
				t.Fatalf("closed as %v, %v; want %s", got.State, err, tc.state)
			}
			res, err := core.ResumeOf(got)
			if err != nil {
				t.Fatal(err)
			}
			p, err := fence.ParseResume(res.Text)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(p.Lines, notApproved) {
				t.Errorf("no trusted line says the call was not approved:\n%s", res.Text)
			}
			if strings.Contains(res.Text, fence.DeclineText) {
				t.Errorf("a call that was not approved resumes with %q:\n%s", fence.DeclineText, res.Text)
			}
			if res.Structured.Approved != nil {
				t.Errorf("the data says approved=%v for a call nobody decided", *res.Structured.Approved)
			}
		})
	}
}

// TestOtherDeclinesStillProceed: a decline of anything but a gated call
// keeps the fixed text that lets the agent go on by its own judgement,
// and says nothing of a tool call.
func TestOtherDeclinesStillProceed(t *testing.T) {
	ctx := t.Context()
	svc, _ := coretest.Open(t, coretest.Options{})
	ops := core.Decider{Surface: core.SurfaceAPI, ID: "ops", Name: "Ops"}
	for _, in := range []core.AskInput{
		{Kind: core.KindClarification, Text: "Which region?"},
		{Kind: core.KindDecision, Text: "Which database?", Options: []core.Option{
			{ID: "pg", Title: "Postgres", Writeup: "Ours.", Recommended: true}, {ID: "ddb", Title: "DynamoDB", Writeup: "Managed."}}},
		{Kind: core.KindForm, Text: "Two choices", Items: []core.FormItem{
			{ID: "logger", Question: "Which logger?", Options: []core.FormOption{{ID: "slog", Label: "slog"}, {ID: "zl", Label: "zerolog"}}}}},
	} {
		in.Agent, in.RunID, in.Reversibility = "agent-a", "run-1", core.Reversible
		q, err := svc.Ask(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		o, err := svc.Decline(ctx, q.ID, ops)
		if err != nil {
			t.Fatal(err)
		}
		res, err := core.ResumeOf(o.Question)
		if err != nil {
			t.Fatal(err)
		}
		p, err := fence.ParseResume(res.Text)
		if err != nil {
			t.Fatal(err)
		}
		if last := p.Regions[len(p.Regions)-1]; last.Tag != fence.TagDecline || last.Content != fence.DeclineText {
			t.Errorf("%s: the decline ends with %+v, want the fixed decline text", in.Kind, last)
		}
		if strings.Contains(res.Text, "tool call") {
			t.Errorf("%s: the decline speaks of a tool call:\n%s", in.Kind, res.Text)
		}
	}
}

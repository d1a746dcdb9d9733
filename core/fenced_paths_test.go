package core_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence/fencetest"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestEveryPathsResumeIsFenced is law 11's property test on core's side,
// for the paths the program's (cmd's TestNothingUnfencedReachesAnAgent)
// has no row of: a quorum whose voter a reload took off (closed by the
// others, timed out, withdrawn), a form and a batch closed partway (by
// the clock, a decline, an operator), an approval edited, escalated or
// re-asked, and a batch a standing approval covered in part. A hostile
// marker goes in every name and word a person gives; each resume's text
// and data, and each call's own result, must carry them only inside a
// fence, and each marker planted must reach the agent.
func TestEveryPathsResumeIsFenced(t *testing.T) {
	ctx := t.Context()
	mk := fencetest.New()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	people := map[string]core.Person{}
	for _, n := range []string{"alice", "bob", "carol"} {
		people[n] = core.Person{DisplayName: mk.Carried(n + "'s configured display name"),
			IDs: map[core.Surface][]string{core.SurfaceAPI: {n + "-tok"}}}
	}
	config := func(members ...string) core.Config {
		api := map[core.Surface][]string{core.SurfaceAPI: {"*"}}
		return core.Config{ActorKey: []byte(coretest.ActorKey), People: people, Groups: map[string]core.Group{"g": {Members: members}},
			Routes: map[string]core.Route{
				core.DefaultRoute: {Deciders: api, EscalateTo: "later"},
				"later":           {Deciders: api},
				"quorum":          {People: []string{"group:g"}, Quorum: 2},
			}}
	}
	svc, err := core.New(coretest.OpenStore(t), config("alice", "bob", "carol"), clock)
	if err != nil {
		t.Fatal(err)
	}
	who := func(id, field string) core.Decider {
		return core.Decider{Surface: core.SurfaceAPI, ID: id, Name: mk.Carried(field)}
	}
	person := func(n string) core.Decider { return core.Decider{Surface: core.SurfaceAPI, ID: n + "-tok"} }
	ask := func(in core.AskInput) *core.Question {
		t.Helper()
		in.Agent, in.Reversibility = "agent-a", core.Reversible
		if in.RunID == "" {
			in.RunID = "run-1"
		}
		q, err := svc.Ask(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	answer := func(in core.AnswerInput) {
		t.Helper()
		if _, err := svc.Answer(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	timeOut := func() {
		t.Helper()
		clock.Advance(2 * time.Hour)
		if _, err := svc.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cancel := func(id core.QuestionID) {
		t.Helper()
		if _, err := svc.Cancel(ctx, core.CancelInput{QuestionID: id, By: who("ops", "an operator's name at a cancel"),
			Reason: mk.Carried("an operator's cancel reason")}); err != nil {
			t.Fatal(err)
		}
	}
	reload := func(members ...string) {
		t.Helper()
		if err := svc.Reconfigure(config(members...)); err != nil {
			t.Fatal(err)
		}
	}
	approval := func(tool string) core.AskInput {
		return core.AskInput{Kind: core.KindApproval, Text: "May I?", Tool: tool, Arguments: json.RawMessage(`{"to":"x"}`), Timeout: time.Hour}
	}
	batch := func(run core.RunID) core.AskInput {
		return core.AskInput{Kind: core.KindApproval, Text: "These?", RunID: run, Timeout: time.Hour, Calls: []core.CallInput{
			{ToolCallID: "c1", Tool: "write", Arguments: json.RawMessage(`{"to":"a"}`), Editable: &core.Editable{Keys: []string{"to"}}},
			{ToolCallID: "c2", Tool: "lint", Arguments: json.RawMessage(`{}`)},
			{ToolCallID: "c3", Tool: "write", Arguments: json.RawMessage(`{"to":"c"}`)},
		}}
	}
	edited := func(field string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"to": mk.Carried(field)})
		return b
	}
	var closed []core.QuestionID

	// A quorum whose first voter a reload takes off, closed by the two
	// left; and one timed out with the removed voter's vote alone.
	q := ask(func() core.AskInput { in := approval("deploy"); in.Route = "quorum"; return in }())
	answer(core.AnswerInput{QuestionID: q.ID, Decider: person("alice"), OptionID: core.ApproveOption, Text: mk.Dropped("a removed voter's note")})
	short := ask(func() core.AskInput { in := approval("rollback"); in.Route = "quorum"; return in }())
	answer(core.AnswerInput{QuestionID: short.ID, Decider: person("alice"), OptionID: core.DenyOption, Text: mk.Dropped("a removed voter's note on a timeout")})
	withdrawn := ask(func() core.AskInput { in := approval("restart"); in.Route = "quorum"; return in }())
	answer(core.AnswerInput{QuestionID: withdrawn.ID, Decider: person("bob"), OptionID: core.ApproveOption, Text: mk.Carried("a vote's note before a cancel")})
	reload("bob", "carol")
	answer(core.AnswerInput{QuestionID: q.ID, Decider: person("bob"), OptionID: core.ApproveOption, Text: mk.Carried("a counted vote's note")})
	answer(core.AnswerInput{QuestionID: q.ID, Decider: person("carol"), OptionID: core.ApproveOption})
	cancel(withdrawn.ID)
	closed = append(closed, q.ID, withdrawn.ID)

	// A form answered in part, then timed out.
	form := ask(core.AskInput{Kind: core.KindForm, Text: "Two?", Timeout: time.Hour, Items: []core.FormItem{
		{ID: "a", Question: "A?", Options: []core.FormOption{{ID: "x", Label: "X"}, {ID: "y", Label: "Y"}}},
		{ID: "b", Question: "B?", Options: []core.FormOption{{ID: "x", Label: "X"}, {ID: "y", Label: "Y"}}},
	}})
	answer(core.AnswerInput{QuestionID: form.ID, Decider: who("f1", "a form part's decider"), Items: []core.ItemInput{{ItemID: "a", Text: mk.Carried("a form item's free text")}}})

	// Batches decided in part, then declined, withdrawn, timed out.
	part := func(run core.RunID, field string) *core.Question {
		b := ask(batch(run))
		answer(core.AnswerInput{QuestionID: b.ID, Decider: who("b-"+string(run), field+": a call's decider"), Calls: []core.CallDecision{
			{ToolCallID: "c1", OptionID: core.ApproveOption, Reason: mk.Carried(field + ": an edited call's reason"), Arguments: edited(field + ": an edited call's argument")},
			{ToolCallID: "c2", OptionID: core.DenyOption, Reason: mk.Carried(field + ": a denied call's reason")},
		}})
		return b
	}
	declined, cancelled, lapsed := part("run-d", "declined batch"), part("run-c", "withdrawn batch"), part("run-t", "timed-out batch")
	if _, err := svc.Decline(ctx, declined.ID, who("dec", "a decliner's name")); err != nil {
		t.Fatal(err)
	}
	cancel(cancelled.ID)
	closed = append(closed, declined.ID, cancelled.ID)

	// A standing approval granted on one call of a batch, which then
	// covers the same call of the next batch of the run; a person
	// decides the rest.
	granter := ask(batch("run-s"))
	answer(core.AnswerInput{QuestionID: granter.ID, Decider: who("g", "a standing approval's grantor"),
		Calls: []core.CallDecision{{ToolCallID: "c2", OptionID: core.ApproveOption, Reason: mk.Carried("a standing grant's reason"),
			Standing: &core.StandingRequest{Scope: core.StandingRun}}}})
	answer(core.AnswerInput{QuestionID: granter.ID, Decider: who("g2", "the rest's decider"), OptionID: core.DenyOption})
	next := batch("run-s")
	for i := range next.Calls {
		next.Calls[i].ToolCallID += "-next"
	}
	covered := ask(next)
	answer(core.AnswerInput{QuestionID: covered.ID, Decider: who("g3", "a decider beside a standing approval"), OptionID: core.ApproveOption})
	closed = append(closed, granter.ID, covered.ID)

	// An approval edited and approved; one escalated, then answered by
	// the escalation route; one asked again, then timed out.
	edit := ask(func() core.AskInput { in := approval("mv"); in.Editable = &core.Editable{All: true}; return in }())
	answer(core.AnswerInput{QuestionID: edit.ID, Decider: who("e", "an editor's name"), OptionID: core.ApproveOption,
		Arguments: edited("an edited argument"), Text: mk.Carried("an edit's reason")})
	esc := ask(func() core.AskInput { in := approval("page"); in.OnTimeout = core.OnTimeoutEscalate; return in }())
	reask := ask(func() core.AskInput { in := approval("ping"); in.OnTimeout = core.OnTimeoutReask; return in }())
	closed = append(closed, edit.ID)

	timeOut() // short, form, lapsed: timed out; esc escalated; reask asked again
	answer(core.AnswerInput{QuestionID: esc.ID, Decider: who("l", "an escalation decider's name"), OptionID: core.DenyOption,
		Text: mk.Carried("a deny reason after an escalation")})
	timeOut() // reask: timed out
	closed = append(closed, short.ID, form.ID, lapsed.ID, esc.ID, reask.ID)

	for _, id := range closed {
		q, err := svc.Get(ctx, id)
		if err != nil || q.Open() {
			t.Fatalf("question %s: %+v, %v", id, q, err)
		}
		where := fmt.Sprintf("%s (%s, closed by %s)", id, q.Shape(), core.CloserOf(q))
		r, err := core.ResumeOf(q)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		mk.Check(t, where, r.Text)
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		mk.CheckJSON(t, where+" data", data, fencetest.ApprovedArguments)
		if !q.IsBatch() {
			continue
		}
		calls, err := core.CallResultsOf(q)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		for _, c := range calls {
			mk.Check(t, where+" call "+c.ToolCallID, c.Resume.Text)
			data, err := json.Marshal(c.Resume)
			if err != nil {
				t.Fatal(err)
			}
			mk.CheckJSON(t, where+" call "+c.ToolCallID+" data", data, fencetest.ApprovedArguments)
		}
	}
	mk.CheckCarried(t, "the agent")
}

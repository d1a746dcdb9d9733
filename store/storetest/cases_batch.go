package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

func init() {
	registerDomain("BatchDecidedCallByCallThenAll", testBatchByCall)
	register("BatchApproveAllRacesPerCallDeny", testBatchRace)
	registerDomain("BatchTimeoutLeavesUndecidedCallsHonest", testBatchTimeout)
	registerDomain("BatchAskIsChecked", testBatchValidate)
	register("BatchGrantsAndMeetsStandingApprovals", testBatchStanding)
}

// batch asks for n reversible writes on route ops, the first editable.
func batch(n int) core.AskInput {
	in := core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", Route: "ops",
		Text: "Write these files?", Reversibility: core.Reversible}
	for i := range n {
		in.Calls = append(in.Calls, core.CallInput{ToolCallID: nextCall(), Tool: "write_file",
			Arguments: json.RawMessage(fmt.Sprintf(`{"path":"/srv/f%d","body":"x"}`, i))})
	}
	in.Calls[0].Editable = &core.Editable{Keys: []string{"path"}}
	return in
}

func (e *env) decide(id core.QuestionID, who string, ds ...core.CallDecision) (core.Outcome, error) {
	return e.svc.Answer(e.t.Context(), core.AnswerInput{QuestionID: id, Decider: apiDecider(who), Calls: ds})
}

func (e *env) all(id core.QuestionID, who, option string) (core.Outcome, error) {
	return e.svc.Answer(e.t.Context(), core.AnswerInput{QuestionID: id, Decider: apiDecider(who), OptionID: option})
}

func testBatchByCall(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(batch(5))
	if len(q.Calls) != 5 || q.Call != nil {
		t.Fatalf("stored %d calls, call %+v", len(q.Calls), q.Call)
	}
	c := q.Calls
	o, err := e.decide(q.ID, "alice", core.CallDecision{ToolCallID: c[1].ToolCallID, OptionID: core.DenyOption, Reason: "not that one"})
	if err != nil || o.Closed {
		t.Fatalf("one call: %+v, %v", o, err)
	}
	edited := `{"path":"/srv/elsewhere","body":"x"}`
	if _, err := e.decide(q.ID, "bob", core.CallDecision{ToolCallID: c[0].ToolCallID, OptionID: core.ApproveOption,
		Arguments: json.RawMessage(`{"path":"/srv/f0","body":"rm"}`)}); core.ErrorCode(err) != core.CodeInvalid || !strings.Contains(err.Error(), `"body" may not be changed`) {
		t.Fatalf("an edit of a fixed key: %v", err)
	}
	if _, err := e.decide(q.ID, "bob", core.CallDecision{ToolCallID: c[0].ToolCallID, OptionID: core.ApproveOption, Arguments: json.RawMessage(edited)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.decide(q.ID, "carol", core.CallDecision{ToolCallID: c[1].ToolCallID, OptionID: core.ApproveOption}); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("deciding a decided call again: %v", err)
	}
	e.restart() // partial decisions are durable
	if got := e.get(q.ID); !got.Open() || len(got.Answers) != 2 {
		t.Fatalf("after a restart: %s with %d decisions", got.State, len(got.Answers))
	}
	o, err = e.all(q.ID, "carol", core.ApproveOption)
	if err != nil || !o.Closed || o.Question.State != core.StateAnswered {
		t.Fatalf("approve all: %+v, %v", o, err)
	}
	got := e.get(q.ID)
	want := []string{core.ApproveOption, core.DenyOption, core.ApproveOption, core.ApproveOption, core.ApproveOption}
	for i, a := range got.Answers {
		if a.ItemID != c[i].ToolCallID || a.OptionID != want[i] {
			t.Fatalf("decision %d: %+v, want %s for %s", i, a, want[i], c[i].ToolCallID)
		}
	}
	if got.Answers[0].Edit == nil || got.Answers[0].Edit.AskedArgumentsSHA256 != c[0].ArgumentsSHA256 {
		t.Fatalf("the edit was not kept: %+v", got.Answers[0].Edit)
	}
	res, err := core.ResumeOf(got)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Structured.Calls) != 5 || !*res.Structured.Calls[2].Approved || *res.Structured.Calls[1].Approved || !res.Structured.Calls[0].Edited {
		t.Fatalf("resume data %+v", res.Structured.Calls)
	}
	results, err := core.CallResultsOf(got)
	if err != nil || len(results) != 5 {
		t.Fatalf("call results: %d, %v", len(results), err)
	}
	for i, r := range results {
		if r.ToolCallID != c[i].ToolCallID || r.Resume.Structured.ToolCallID != c[i].ToolCallID {
			t.Fatalf("result %d is bound to %s / %s, want %s", i, r.ToolCallID, r.Resume.Structured.ToolCallID, c[i].ToolCallID)
		}
	}
	if !strings.Contains(results[1].Resume.Text, "do not make it") || !strings.Contains(results[1].Resume.Text, "not that one") {
		t.Fatalf("the denied call's result:\n%s", results[1].Resume.Text)
	}
	if st := results[0].Resume.Structured; !st.Edited || string(st.ApprovedArguments) != `{"body":"x","path":"/srv/elsewhere"}` {
		t.Fatalf("the edited call's result data %+v", st)
	}
	kinds := coretest.Kinds(e.events(q.ID))
	if count(kinds, core.EventItemAnswered) != 2 || kinds[len(kinds)-1] != core.EventAnswered {
		t.Fatalf("events %v", kinds)
	}
}

// testBatchRace: approve all on one door and a per-call deny on another,
// at once, many times: each call ends with exactly one outcome, and the
// loser is told the truth.
func testBatchRace(t *testing.T, h Harness) {
	e := newEnv(t, h)
	for round := range 10 {
		q := e.ask(batch(4))
		target := q.Calls[2].ToolCallID
		var wg sync.WaitGroup
		var allErr, denyErr error
		wg.Add(2)
		go func() { defer wg.Done(); _, allErr = e.all(q.ID, "alice", core.ApproveOption) }()
		go func() {
			defer wg.Done()
			_, denyErr = e.decide(q.ID, "bob", core.CallDecision{ToolCallID: target, OptionID: core.DenyOption})
		}()
		wg.Wait()
		if allErr != nil {
			t.Fatalf("round %d: approve all failed: %v", round, allErr)
		}
		got := e.get(q.ID)
		if got.State != core.StateAnswered || len(got.Answers) != 4 {
			t.Fatalf("round %d: %s with %d decisions", round, got.State, len(got.Answers))
		}
		a, _ := got.Answered(target)
		switch {
		case denyErr == nil && a.OptionID != core.DenyOption:
			t.Fatalf("round %d: the deny counted but the call reads %s", round, a.OptionID)
		case denyErr != nil && !errors.Is(denyErr, core.ErrClosed):
			t.Fatalf("round %d: the losing deny was told %v", round, denyErr)
		case denyErr != nil && a.OptionID != core.ApproveOption:
			t.Fatalf("round %d: the deny lost but the call reads %s", round, a.OptionID)
		}
		for _, ans := range got.Answers {
			if ans.ItemID != target && ans.OptionID != core.ApproveOption {
				t.Fatalf("round %d: call %s reads %s", round, ans.ItemID, ans.OptionID)
			}
		}
	}
}

func testBatchTimeout(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(batch(3))
	if _, err := e.decide(q.ID, "alice", core.CallDecision{ToolCallID: q.Calls[0].ToolCallID, OptionID: core.ApproveOption}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(core.DefaultTimeout + 1)
	if _, err := e.svc.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := e.get(q.ID)
	if got.State != core.StateTimedOut {
		t.Fatalf("state %s", got.State)
	}
	results, err := core.CallResultsOf(got)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(results[0].Resume.Text, "The human approved the gated tool call.") {
		t.Fatalf("the decided call's result:\n%s", results[0].Resume.Text)
	}
	for _, r := range results[1:] {
		if !r.Resume.Structured.Undecided || !strings.Contains(r.Resume.Text, "not decided before the deadline: do not make it") {
			t.Fatalf("an undecided call's result:\n%s", r.Resume.Text)
		}
	}
	if _, err := e.all(q.ID, "bob", core.ApproveOption); !errors.Is(err, core.ErrClosed) {
		t.Fatalf("approve all after the timeout: %v", err)
	}
}

func testBatchValidate(t *testing.T, h Harness) {
	e := newEnv(t, h)
	for name, mutate := range map[string]func(*core.AskInput){
		"one call":       func(in *core.AskInput) { in.Calls = in.Calls[:1] },
		"21 calls":       func(in *core.AskInput) { *in = batch(21) },
		"duplicate id":   func(in *core.AskInput) { in.Calls[1].ToolCallID = in.Calls[0].ToolCallID },
		"missing id":     func(in *core.AskInput) { in.Calls[1].ToolCallID = "" },
		"tool and calls": func(in *core.AskInput) { in.Tool = "x" },
		"bad arguments":  func(in *core.AskInput) { in.Calls[1].Arguments = json.RawMessage(`{`) },
	} {
		in := batch(3)
		mutate(&in)
		if _, err := e.svc.Ask(t.Context(), in); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
}

// testBatchStanding is five parallel writes on one card: four approved,
// the fifth's path edited and approved with "don't ask again in this
// run". Five correct results, and nobody is asked about the tool again in
// the run: a later batch and a later single ask close at once.
func testBatchStanding(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(batch(5))
	if q.Calls[0].Standing == nil {
		t.Fatal("a reversible batch on route ops offers no standing approval")
	}
	o, err := e.decide(q.ID, "alice", core.CallDecision{ToolCallID: q.Calls[0].ToolCallID, OptionID: core.ApproveOption,
		Arguments: json.RawMessage(`{"path":"/srv/moved","body":"x"}`), Standing: &core.StandingRequest{Scope: core.StandingRun}})
	if err != nil || len(o.Standings) != 1 || o.Standings[0].Tool != "write_file" {
		t.Fatalf("edit, approve and grant: %+v, %v", o.Standings, err)
	}
	granted := o.Standings[0]
	if o, err = e.all(q.ID, "alice", core.ApproveOption); err != nil || !o.Closed {
		t.Fatalf("approve the other four: %+v, %v", o, err)
	}
	results, err := core.CallResultsOf(e.get(q.ID))
	if err != nil || len(results) != 5 {
		t.Fatalf("results: %d, %v", len(results), err)
	}
	for i, r := range results {
		if r.ToolCallID != q.Calls[i].ToolCallID || r.Resume.Structured.Approved == nil || !*r.Resume.Structured.Approved {
			t.Fatalf("result %d: %+v", i, r.Resume.Structured)
		}
	}
	if !results[0].Resume.Structured.Edited {
		t.Fatal("the edited call's result does not say so")
	}
	e.claimAll(core.SurfaceSlack, "c")

	later := e.ask(batch(2))
	if later.State != core.StateAnswered || len(later.Answers) != 2 || later.Answers[0].Standing == nil {
		t.Fatalf("a later batch in the run: %s with %+v", later.State, later.Answers)
	}
	if ds := e.claimAll(core.SurfaceSlack, "c"); len(ds) != 0 {
		t.Fatalf("a batch covered whole posted %d cards", len(ds))
	}
	lr, err := core.CallResultsOf(later)
	if err != nil || lr[1].Resume.Structured.Standing == nil || !strings.Contains(lr[1].Resume.Text, "A standing approval answered this question at once") {
		t.Fatalf("a covered call's result: %v\n%s", err, lr[1].Resume.Text)
	}
	covered(t, e.ask(writeCall("run-1", "/srv/single")), &granted)
	// A batch that is only partly covered posts its card, with the
	// covered calls decided.
	mixed := batch(2)
	mixed.Calls[1].Tool = "delete_file"
	m := e.ask(mixed)
	if !m.Open() || len(m.Answers) != 1 || m.Answers[0].ItemID != mixed.Calls[0].ToolCallID {
		t.Fatalf("a partly covered batch: %s with %+v", m.State, m.Answers)
	}
	if ds := e.claimAll(core.SurfaceSlack, "c"); len(ds) != 1 {
		t.Fatalf("a partly covered batch posted %d cards, want 1", len(ds))
	}
}

package core_test

import (
	"encoding/json"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestARepeatAfterAReloadClosesNothingItsQuestionDidNotOffer: the
// agent's repeat of an ask is built anew under the configuration in
// force, but the standing approval it finds may close the question
// parked before only if that question, as asked, was one a standing
// approval covers. Here a rule made the call hard to reverse when it was
// asked, and people were asked; a reload dropped the rule; the repeat
// (a retry after a lost response) must not close it as approved by a
// standing approval granted before, nobody asked. Before, it did.
func TestARepeatAfterAReloadClosesNothingItsQuestionDidNotOffer(t *testing.T) {
	st := &failingCommits{Store: coretest.OpenStore(t)}
	svc, err := core.New(st, ruledConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ask := func(id string) core.AskInput {
		return core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", ToolCallID: id, Text: "Run it?",
			Reversibility: core.Reversible, Tool: "shell", Arguments: json.RawMessage(`{"command":"ls"}`)}
	}
	first, err := svc.Ask(ctx, ask("t1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: first.ID, Decider: ops, OptionID: core.ApproveOption,
		Standing: &core.StandingRequest{Scope: core.StandingRun}}); err != nil {
		t.Fatal(err)
	}

	if err := svc.Reconfigure(ruledConfig(core.Rule{When: `tool == "shell"`, Reversibility: core.HardToReverse})); err != nil {
		t.Fatal(err)
	}
	hard, err := svc.Ask(ctx, ask("t2"))
	if err != nil || !hard.Open() || hard.Reversibility != core.HardToReverse {
		t.Fatalf("asked as hard to reverse: %+v, %v; want it open, for people", hard, err)
	}
	if err := svc.Reconfigure(ruledConfig()); err != nil {
		t.Fatal(err)
	}
	q, repeat, err := svc.AskOrRepeat(ctx, ask("t2"))
	if err != nil || !repeat || q.ID != hard.ID {
		t.Fatalf("the repeat: %+v, %v, %v", q, repeat, err)
	}
	if !q.Open() {
		t.Fatalf("the repeat closed the hard-to-reverse question: %s by %s; want it left open for the people asked", q.State, core.CloserOf(q))
	}
	if o, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: ops, OptionID: core.DenyOption}); err != nil || core.CloserOf(o.Question) != core.CloserPerson {
		t.Fatalf("a person's deny: %+v, %v", o, err)
	}

	// A question that did offer one, parked but not closed (the store
	// failed between the two), the repeat closes as the standing
	// approval covers it.
	st.fail.Store(1)
	if _, err := svc.Ask(ctx, ask("t3")); err == nil {
		t.Fatal("the ask's close did not fail: the test tests nothing")
	}
	q, repeat, err = svc.AskOrRepeat(ctx, ask("t3"))
	if err != nil || !repeat || q.Open() || core.CloserOf(q) != core.CloserStanding {
		t.Fatalf("the repeat of a covered ask: %+v, %v, %v; want it closed by the standing approval", q, repeat, err)
	}
}

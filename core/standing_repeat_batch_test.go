package core_test

import (
	"encoding/json"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestARepeatedBatchAfterAReloadClosesNoCallItsQuestionDidNotOffer is
// TestARepeatAfterAReloadClosesNothingItsQuestionDidNotOffer for a batch:
// a call parked as hard to reverse, asked of people, is not approved by
// a standing approval the repeat of its ask finds after a reload dropped
// the rule. Before, the repeat approved it, nobody asked.
func TestARepeatedBatchAfterAReloadClosesNoCallItsQuestionDidNotOffer(t *testing.T) {
	svc, err := core.New(coretest.OpenStore(t), ruledConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	first, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", ToolCallID: "t1", Text: "Run it?",
		Reversibility: core.Reversible, Tool: "shell", Arguments: json.RawMessage(`{"command":"ls"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: first.ID, Decider: ops, OptionID: core.ApproveOption,
		Standing: &core.StandingRequest{Scope: core.StandingRun}}); err != nil {
		t.Fatal(err)
	}

	batch := core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", ToolCallID: "b", Text: "Run these?",
		Reversibility: core.Reversible, Calls: []core.CallInput{
			{ToolCallID: "b1", Tool: "shell", Arguments: json.RawMessage(`{"command":"ls"}`)},
			{ToolCallID: "b2", Tool: "fetch", Arguments: json.RawMessage(`{"url":"https://example.com"}`)},
		}}
	if err := svc.Reconfigure(ruledConfig(core.Rule{When: `tool == "shell"`, Reversibility: core.HardToReverse})); err != nil {
		t.Fatal(err)
	}
	hard, err := svc.Ask(ctx, batch)
	if err != nil || !hard.Open() || hard.Reversibility != core.HardToReverse {
		t.Fatalf("asked as hard to reverse: %+v, %v; want it open, for people", hard, err)
	}
	if _, done := hard.Answered("b1"); done {
		t.Fatal("b1 was decided at the ask: the test tests nothing")
	}
	if err := svc.Reconfigure(ruledConfig()); err != nil {
		t.Fatal(err)
	}
	q, repeat, err := svc.AskOrRepeat(ctx, batch)
	if err != nil || !repeat || q.ID != hard.ID {
		t.Fatalf("the repeat: %+v, %v, %v", q, repeat, err)
	}
	if a, done := q.Answered("b1"); done {
		t.Fatalf("the repeat decided b1 of the hard-to-reverse batch: %+v; want it left for the people asked", a)
	}
}

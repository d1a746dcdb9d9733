package core_test

import (
	"context"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// replayingStore is a real store whose Resolve runs each transition twice
// and reports only the second run, as a store does that lost the first
// run's reply on a failed connection and retried.
type replayingStore struct{ core.Store }

func (r replayingStore) Resolve(ctx context.Context, t core.Transition) (*core.Question, error) {
	if _, err := r.Store.Resolve(ctx, t); err != nil {
		return nil, err
	}
	return r.Store.Resolve(ctx, t)
}

// TestReplayedCloseIsTheCallersWin: an answer whose close ran twice is
// taken, not refused as lost, and leaves no refusal in the log; a later
// answer by someone else still loses.
func TestReplayedCloseIsTheCallersWin(t *testing.T) {
	st := coretest.OpenStore(t)
	svc := coretest.Service(t, replayingStore{st}, coretest.Options{})
	ctx := t.Context()
	q, err := svc.Ask(ctx, core.AskInput{
		Kind: core.KindClarification, Agent: "agent-a", RunID: "run-1", Text: "Which region?",
		Reversibility: core.Reversible,
	})
	if err != nil {
		t.Fatal(err)
	}
	ada := core.Decider{Surface: core.SurfaceAPI, ID: "ada", Name: "Ada"}
	out, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: ada, Text: "eu-west-1"})
	if err != nil || !out.Closed || out.Question.Resolution == nil || out.Question.Resolution.Answer != "eu-west-1" {
		t.Fatalf("the replayed answer: %+v, %v; want it taken", out, err)
	}
	events, err := st.QuestionEvents(ctx, q.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Kind == core.EventRefused {
			t.Fatalf("the winner's replayed close was logged as refused: %+v", e)
		}
	}
	bob := core.Decider{Surface: core.SurfaceAPI, ID: "bob", Name: "Bob"}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: bob, Text: "us-east-1"}); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("a later answer by someone else: %v, want a conflict", err)
	}
}

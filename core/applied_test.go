package core_test

import (
	"context"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// closesMeanwhile is a real store on which another attempt closes the
// question right after each transition is applied, and which then
// answers as a store does that sent the transition again (its reply
// lost): with an AppliedError.
type closesMeanwhile struct{ core.Store }

func (s closesMeanwhile) Commit(ctx context.Context, c core.Change) (*core.Question, error) {
	if _, err := s.Store.Commit(ctx, c); err != nil {
		return nil, err
	}
	bob := core.Decider{Surface: core.SurfaceAPI, ID: "bob", Name: "Bob"}
	id := c.Question.ID
	q, err := core.Apply(ctx, s.Store, core.Transition{QuestionID: id, Now: c.Now,
		Resolution: &core.Resolution{State: core.StateCancelled, Decider: bob, At: c.Now},
		Event:      core.Event{QuestionID: id, At: c.Now, Kind: core.EventCancelled, Surface: core.SurfaceAPI}})
	if err != nil {
		return nil, err
	}
	return nil, &core.AppliedError{Question: q}
}

// TestAppliedTransitionIsNotTheClose: form items the store had recorded
// before another attempt closed the form are the caller's success, not a
// loss and not the close.
func TestAppliedTransitionIsNotTheClose(t *testing.T) {
	st := coretest.OpenStore(t)
	svc := coretest.Service(t, closesMeanwhile{st}, coretest.Options{})
	ctx := t.Context()
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindForm, Agent: "agent-a", RunID: "run-1", Text: "Plan the release",
		Reversibility: core.Reversible, Items: []core.FormItem{
			{ID: "day", Question: "Which day?", Options: []core.FormOption{{ID: "mon", Label: "Monday"}, {ID: "fri", Label: "Friday"}}},
			{ID: "notes", Question: "Notes?", Options: []core.FormOption{{ID: "short", Label: "Short"}, {ID: "long", Label: "Long"}}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	ada := core.Decider{Surface: core.SurfaceAPI, ID: "ada", Name: "Ada"}
	o, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: ada, Items: []core.ItemInput{{ItemID: "day", OptionID: "fri"}}})
	if err != nil {
		t.Fatalf("items recorded before another closed the form: %v; want them taken", err)
	}
	if o.Closed || o.Question == nil || o.Question.State != core.StateCancelled || len(o.Question.Answers) != 1 {
		t.Fatalf("the outcome: closed %v, question %+v; want not closed by this attempt, the form as stored", o.Closed, o.Question)
	}
	events, err := st.QuestionEvents(ctx, q.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Kind == core.EventRefused {
			t.Fatalf("the recorded items were logged as refused: %+v", e)
		}
	}
}

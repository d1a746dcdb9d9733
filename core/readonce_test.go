package core_test

import (
	"errors"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestButtonAnswerReadsOnce: a click read its question to build its
// answer (AnswerFor), and the chokepoint starts from that read: the
// click costs one read and one commit, not a second read before the
// commit (issue 31: every round trip before the ack is one more wait in
// a burst). A change that lands between the read and the commit still
// counts: the commit goes stale, the attempt reads the question as
// stored, and the clicker is told who closed it.
func TestButtonAnswerReadsOnce(t *testing.T) {
	ctx := t.Context()
	routes := map[string]core.Route{"ops": {Deciders: map[core.Surface][]string{core.SurfaceSlack: {"U1", "U2"}}}}
	ask := core.AskInput{Agent: "agent", RunID: "run-1", Route: "ops", Kind: core.KindDecision, Reversibility: core.Reversible,
		Text: "Which?", Options: []core.Option{{ID: "a", Title: "A", Writeup: "Known.", Recommended: true}, {ID: "b", Title: "B", Writeup: "New."}}}
	one := core.Decider{Surface: core.SurfaceSlack, ID: "U1", Name: "One"}
	two := core.Decider{Surface: core.SurfaceSlack, ID: "U2", Name: "Two"}
	click := func(svc *core.Service, id core.QuestionID, d core.Decider) (core.Outcome, error) {
		q, err := svc.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		in, err := core.AnswerFor(q, core.Ref{QuestionID: id, Item: -1, Action: core.RefOption, Option: 1}, d, "")
		if err != nil {
			t.Fatal(err)
		}
		return svc.Answer(ctx, in)
	}

	t.Run("one read", func(t *testing.T) {
		st := &triedStore{Store: coretest.OpenStore(t)}
		svc := coretest.Service(t, st, coretest.Options{Routes: routes})
		q, err := svc.Ask(ctx, ask)
		if err != nil {
			t.Fatal(err)
		}
		before := st.counts()
		out, err := click(svc, q.ID, one)
		if err != nil || !out.Closed {
			t.Fatalf("click: %+v %v", out, err)
		}
		after := st.counts()
		if reads, commits := after[0]+after[1]-before[0]-before[1], after[2]-before[2]; reads != 1 || commits != 1 {
			t.Errorf("the click read %d times and committed %d times; want 1 and 1", reads, commits)
		}
	})

	t.Run("closed since the read", func(t *testing.T) {
		st := &triedStore{Store: coretest.OpenStore(t)}
		svc := coretest.Service(t, st, coretest.Options{Routes: routes})
		q, err := svc.Ask(ctx, ask)
		if err != nil {
			t.Fatal(err)
		}
		// Two's click is read first; One's closes the question before
		// Two's commit is written.
		st.meanwhile = func() {
			if _, err := click(svc, q.ID, one); err != nil {
				t.Errorf("the other click: %v", err)
			}
		}
		_, err = click(svc, q.ID, two)
		var closed *core.ClosedError
		if !errors.As(err, &closed) || closed.Question.Resolution == nil || closed.Question.Resolution.Decider.ID != one.ID {
			t.Fatalf("the later click: %v; want it told that One closed the question", err)
		}
		if got, _ := svc.Get(ctx, q.ID); got.Resolution.OptionID != "b" || got.Resolution.Decider.ID != one.ID {
			t.Fatalf("resolution %+v", got.Resolution)
		}
	})
}

package core_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestASecondAnswerOfTheCloserIsToldItsFirstStands: a double tap, or the
// same person answering again from another surface, is refused as any
// late answer is, but told that their own earlier answer closed the
// question and stands; anyone else is told theirs was not recorded.
// Before, the closer was told "Your answer was not recorded" too, as if
// the answer that closed it had been lost.
func TestASecondAnswerOfTheCloserIsToldItsFirstStands(t *testing.T) {
	ctx := t.Context()
	people := map[string]core.Person{"alice": {IDs: map[core.Surface][]string{core.SurfaceSlack: {"U1"}, core.SurfaceTelegram: {"T1"}}}}
	svc, err := core.New(coretest.OpenStore(t), core.Config{ActorKey: []byte("k"), People: people, Routes: map[string]core.Route{core.DefaultRoute: {
		Deciders: map[core.Surface][]string{core.SurfaceSlack: {"U1", "U2"}, core.SurfaceTelegram: {"T1"}}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Text: "Go?",
		Reversibility: core.Reversible, Tool: "deploy", Arguments: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	answer := func(d core.Decider) error {
		_, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: d, OptionID: core.ApproveOption})
		return err
	}
	if err := answer(core.Decider{Surface: core.SurfaceSlack, ID: "U1"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		who  core.Decider
		own  bool
		note string
	}{
		{core.Decider{Surface: core.SurfaceSlack, ID: "U1"}, true, "Already closed by your earlier answer: "},
		{core.Decider{Surface: core.SurfaceTelegram, ID: "T1"}, true, "That answer stands; nothing more was recorded."},
		{core.Decider{Surface: core.SurfaceSlack, ID: "U2"}, false, "Your answer was not recorded."},
	} {
		err := answer(c.who)
		var closed *core.ClosedError
		if !errors.As(err, &closed) || closed.Own != c.own {
			t.Errorf("%s:%s answering again: %v (own %v); want a ClosedError, own %v", c.who.Surface, c.who.ID, err, closed != nil && closed.Own, c.own)
			continue
		}
		if note := card.RefusalNote(err); !strings.Contains(note, c.note) || !strings.Contains(note, "Answered by U1") {
			t.Errorf("%s:%s is told %q; want %q and the outcome", c.who.Surface, c.who.ID, note, c.note)
		}
	}
}

package core_test

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestNotifyCallsOnEveryChange: a watcher told to Notify calls its
// function for a change that came before Notify and for each after (the
// store calls back, core.Store's WatchFunc), and never after Stop.
func TestNotifyCallsOnEveryChange(t *testing.T) {
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{})
	ask := func() *core.Question {
		q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindForm, Agent: "a", RunID: "r", Route: "default", Text: "Two things",
			Reversibility: core.Reversible, Items: []core.FormItem{
				{ID: "a", Question: "A?", Options: []core.FormOption{{ID: "x", Label: "X"}, {ID: "y", Label: "Y"}}},
				{ID: "b", Question: "B?", Options: []core.FormOption{{ID: "x", Label: "X"}, {ID: "y", Label: "Y"}}},
			}})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	item := func(q *core.Question, id string) {
		if _, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "op"},
			Items: []core.ItemInput{{ItemID: id, OptionID: "x"}}}); err != nil {
			t.Fatal(err)
		}
	}
	q := ask()
	w, err := svc.Watch(q.ID)
	if err != nil {
		t.Fatal(err)
	}
	item(q, "a") // before Notify: pending
	woke := make(chan struct{}, 16)
	w.Notify(func() { woke <- struct{}{} })
	wait := func(what string) {
		select {
		case <-woke:
		case <-time.After(10 * time.Second):
			t.Fatalf("no call for %s", what)
		}
	}
	wait("the change made before Notify")
	item(q, "b")
	wait("the change made after Notify")
	w.Stop()
	if got, err := svc.Get(t.Context(), q.ID); err != nil || got.Open() {
		t.Fatalf("the form after both items: %+v, %v", got, err)
	}
	if n := len(woke); n != 0 {
		t.Fatalf("%d calls more than changes", n)
	}
}

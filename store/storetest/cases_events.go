package storetest

import (
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register("QuestionEventsThroughTheIndex", testQuestionEvents)
}

// testQuestionEvents: one question's events, read through the store's
// index of them, are exactly those the whole log holds for it, in order.
func testQuestionEvents(t *testing.T, h Harness) {
	e := newEnv(t, h)
	ctx := t.Context()
	q1 := e.ask(clarification("run-1"))
	q2 := e.ask(clarification("run-1"))
	by := core.Decider{Surface: core.SurfaceAPI, ID: "ops"}
	if _, err := e.svc.Answer(ctx, core.AnswerInput{QuestionID: q1.ID, Decider: by, Text: "yes"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Answer(ctx, core.AnswerInput{QuestionID: q1.ID, Decider: by, Text: "again"}); err == nil {
		t.Fatal("a second answer was accepted")
	}
	if _, err := e.svc.Decline(ctx, q2.ID, by); err != nil {
		t.Fatal(err)
	}
	e.restart()
	for _, id := range []core.QuestionID{q1.ID, q2.ID} {
		got, err := e.store.QuestionEvents(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(e.events(id), got); diff != "" {
			t.Fatalf("question %s's events differ from the log's (-log +index):\n%s", id, diff)
		}
	}
	if got, _ := e.store.QuestionEvents(ctx, q1.ID, 0); len(got) != 3 ||
		got[0].Kind != core.EventAsked || got[1].Kind != core.EventAnswered || got[2].Kind != core.EventRefused {
		t.Fatalf("q1's events: %v", eventKinds(got))
	}
	if got, err := e.store.QuestionEvents(ctx, q1.ID, 2); err != nil || len(got) != 2 || got[1].Kind != core.EventAnswered {
		t.Fatalf("limit 2: %v, %v", eventKinds(got), err)
	}
	unknown := q1.ID[:1] + core.QuestionID("zzzzzzzzzzzzzzzz"[:len(q1.ID)-1])
	for _, id := range []core.QuestionID{unknown, "not an id", ""} {
		if got, err := e.store.QuestionEvents(ctx, id, 0); err != nil || len(got) != 0 {
			t.Fatalf("%q: %v, %v", id, got, err)
		}
	}
}

func eventKinds(evs []core.Event) []core.EventKind {
	out := make([]core.EventKind, len(evs))
	for i, ev := range evs {
		out[i] = ev.Kind
	}
	return out
}

func init() {
	register("AnEventNeedsAKind", testEventNeedsAKind)
}

// testEventNeedsAKind: an appended event without a kind says nothing an
// audit can read; it is refused as invalid and not logged.
func testEventNeedsAKind(t *testing.T, h Harness) {
	e := newEnv(t, h)
	ctx := t.Context()
	before, err := e.store.Events(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	q := e.ask(clarification("run-1"))
	for _, ev := range []core.Event{
		{At: epoch, Reason: "no kind, no question"},
		{QuestionID: q.ID, RunID: "run-1", At: epoch, Reason: "no kind"},
	} {
		if got, err := e.store.Append(ctx, ev); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("append of %+v: %+v, %v; want invalid", ev, got, err)
		}
	}
	after, err := e.store.Events(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range after[len(before):] {
		if ev.Kind == "" {
			t.Errorf("an event without a kind was logged: %+v", ev)
		}
	}
}

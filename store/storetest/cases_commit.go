package storetest

import (
	"errors"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register("CommitIsCompareAndSet", testCommitCAS)
	register("EveryChangeMovesTheVersion", testVersionMoves)
}

// answerBy is a close of q by who, as core computes it from q as read.
func answerBy(t *testing.T, q *core.Question, who string) core.Change {
	t.Helper()
	d := apiDecider(who)
	c, err := core.Next(q, core.Transition{QuestionID: q.ID, Now: epoch,
		Resolution: &core.Resolution{State: core.StateAnswered, ClosedBy: core.CloserPerson, Decider: d, At: epoch, Answer: "from " + who},
		Event:      core.Event{Kind: core.EventAnswered, Surface: d.Surface, Actor: who}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testCommitCAS: of two changes computed from the same read, the first
// committed is written whole (the question as core computed it, one
// event, one update per card) and the second is refused as stale with
// the question as stored, writing nothing; the stored question is what
// the first commit returned.
func testCommitCAS(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(decision("ops"))
	for _, card := range []core.MessageRef{
		{Surface: core.SurfaceSlack, Room: "C1", ID: "1.1", Delivery: "d-slack"},
		{Surface: core.SurfaceTelegram, Room: "-1001", ID: "7", Delivery: "d-telegram"},
	} {
		if err := e.svc.RecordMessage(t.Context(), q.ID, card); err != nil {
			t.Fatal(err)
		}
	}
	e.claimAll(core.SurfaceSlack, "c")
	e.claimAll(core.SurfaceTelegram, "c")
	read := e.get(q.ID)
	first, second := answerBy(t, read, "ada"), answerBy(t, read, "bob")

	got, err := e.store.Commit(t.Context(), first)
	if err != nil {
		t.Fatalf("the first commit: %v", err)
	}
	if diff := cmp.Diff(first.Question, got); diff != "" {
		t.Fatalf("the first commit returned (-computed +returned):\n%s", diff)
	}
	if diff := cmp.Diff(got, e.get(q.ID)); diff != "" {
		t.Fatalf("stored after the first commit (-returned +stored):\n%s", diff)
	}
	_, err = e.store.Commit(t.Context(), second)
	var stale *core.StaleError
	if !errors.As(err, &stale) || core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("the second commit from the same read: %v; want it stale", err)
	}
	if stale.Question != nil && (stale.Question.Resolution == nil || stale.Question.Resolution.Decider.ID != "ada") {
		t.Fatalf("the stale refusal carries %+v; want the question as ada closed it", stale.Question)
	}
	if got := e.get(q.ID); got.Resolution.Decider.ID != "ada" || got.Version != first.Question.Version {
		t.Fatalf("stored after the stale commit: closed by %s at version %d", got.Resolution.Decider.ID, got.Version)
	}
	if evs := e.events(q.ID); countKind(evs, core.EventAnswered) != 1 {
		t.Fatalf("events %v: want one answered", coretest.Kinds(evs))
	}
	for _, s := range []core.Surface{core.SurfaceSlack, core.SurfaceTelegram} {
		ds := e.claimAll(s, "c")
		if len(ds) != 1 || ds[0].Kind != core.DeliverUpdate || ds[0].Key != first.Updates[0].Key && ds[0].Key != first.Updates[1].Key {
			t.Fatalf("%s deliveries %+v; want the first commit's one update", s, ds)
		}
	}
	// A closed question refuses a change even at its own version (one
	// computed as if it were open): stale, nothing written.
	asOpen := *got
	asOpen.State, asOpen.Resolution = core.StateOpen, nil
	_, err = e.store.Commit(t.Context(), answerBy(t, &asOpen, "carl"))
	if !errors.As(err, &stale) {
		t.Fatalf("a change of the closed question: %v; want it stale", err)
	}
	if got := e.get(q.ID); got.Resolution.Decider.ID != "ada" {
		t.Fatalf("the closed question was changed: %+v", got.Resolution)
	}
}

// testVersionMoves: every change of a question moves its version on (a
// card recorded, a renotice, a commit), so a change computed before any
// of them is stale.
func testVersionMoves(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(decision("ops"))
	v0 := e.get(q.ID)
	if err := e.svc.RecordMessage(t.Context(), q.ID, core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: "1.1", Delivery: "d1"}); err != nil {
		t.Fatal(err)
	}
	v1 := e.get(q.ID)
	if err := e.store.Renotify(t.Context(), core.Renotice{QuestionID: q.ID, Now: epoch, Count: true,
		Event: core.Event{QuestionID: q.ID, At: epoch, Kind: core.EventReminded}}); err != nil {
		t.Fatal(err)
	}
	v2 := e.get(q.ID)
	if !(v0.Version < v1.Version && v1.Version < v2.Version) {
		t.Fatalf("versions %d, %d, %d; want each change to move it on", v0.Version, v1.Version, v2.Version)
	}
	for _, read := range []*core.Question{v0, v1} {
		_, err := e.store.Commit(t.Context(), answerBy(t, read, "ada"))
		var stale *core.StaleError
		if !errors.As(err, &stale) {
			t.Fatalf("a change from version %d after the question reached %d: %v; want it stale", read.Version, v2.Version, err)
		}
	}
	if got, err := e.store.Commit(t.Context(), answerBy(t, v2, "ada")); err != nil || got.Version != v2.Version+1 || got.State != core.StateAnswered {
		t.Fatalf("a change from the current version: %+v, %v", got, err)
	}
}

package core_test

import (
	"errors"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestATickFinishesOnlyEndingsNoLongerUnderWay: a run journalled and
// marked ended a minute ago may be another replica's EndRun still
// expiring its questions (it goes on for up to a minute once the run is
// marked), and a tick leaves it to that EndRun; minutes later it was cut
// short, and a tick finishes it and drops it from the journal.
func TestATickFinishesOnlyEndingsNoLongerUnderWay(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	st := coretest.OpenStore(t)
	svc := coretest.Service(t, st, coretest.Options{Clock: clock})
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r1", Text: "Which region?", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	run := q.Run().Key()
	if err := st.BeginEnding(ctx, run, clock.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.EndRun(ctx, run, clock.Now()); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	if rep, err := svc.Tick(ctx); err != nil || rep.Expired != 0 {
		t.Fatalf("a tick a minute into the ending: %+v, %v; want it left alone", rep, err)
	}
	if got, _ := svc.Get(ctx, q.ID); got.State != core.StateOpen {
		t.Fatalf("a tick a minute into the ending closed its question: %s", got.State)
	}
	clock.Advance(2 * time.Minute)
	if rep, err := svc.Tick(ctx); err != nil || rep.Expired != 1 {
		t.Fatalf("a tick three minutes into the ending: %+v, %v; want its question expired", rep, err)
	}
	if got, _ := svc.Get(ctx, q.ID); got.State != core.StateExpired {
		t.Fatalf("the question after the tick: %s, want expired", got.State)
	}
	if left, err := st.UnfinishedEndings(ctx); err != nil || len(left) != 0 {
		t.Fatalf("the run still journalled after its ending was finished: %v, %v", left, err)
	}
}

// TestAJournalledEndingNamingNoRunIsDropped: an entry of the journal that
// is no run's key is reported once and dropped, not read on every tick.
func TestAJournalledEndingNamingNoRunIsDropped(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	st := coretest.OpenStore(t)
	svc := coretest.Service(t, st, coretest.Options{Clock: clock})
	if err := st.BeginEnding(ctx, "no separator", clock.Now()); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	if _, err := svc.Tick(ctx); core.ErrorCode(err) != core.CodeInternal {
		t.Fatalf("the tick that found it: %v, want an internal error", err)
	}
	if _, err := svc.Tick(ctx); err != nil {
		t.Fatalf("the next tick: %v", err)
	}
}

// TestAFinishedEndRunLeavesNothingJournalled: an EndRun that expired
// every question drops its run from the journal, so ticks find nothing.
func TestAFinishedEndRunLeavesNothingJournalled(t *testing.T) {
	ctx := t.Context()
	st := coretest.OpenStore(t)
	svc := coretest.Service(t, st, coretest.Options{})
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r1", Text: "Which region?", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := svc.EndRun(ctx, q.Run()); err != nil || len(out) != 1 {
		t.Fatalf("end run: %+v, %v", out, err)
	}
	if left, err := st.UnfinishedEndings(ctx); err != nil || len(left) != 0 {
		t.Fatalf("journalled after a finished EndRun: %q, %v", left, err)
	}
}

// TestAnEndingJournalledByAClockAheadRefusesAnswers: a replica whose
// clock runs ahead of this one's journals a run's ending, marks it ended
// and dies; this replica's next tick knows the run is being ended
// whatever the time the journal gives it, so a person's answer to one of
// its questions is refused as one to an expired question. Before, the
// tick read only the endings begun by its own now, and the answer was
// taken for as long as the clocks were apart.
func TestAnEndingJournalledByAClockAheadRefusesAnswers(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	st := coretest.OpenStore(t)
	svc := coretest.Service(t, st, coretest.Options{Clock: clock})
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r1", Text: "Which region?", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	ahead := clock.Now().Add(2 * time.Second)
	if err := st.BeginEnding(ctx, q.Run().Key(), ahead); err != nil {
		t.Fatal(err)
	}
	if _, err := st.EndRun(ctx, q.Run().Key(), ahead); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ada"}, Text: "eu"})
	if closed, ok := errors.AsType[*core.ClosedError](err); !ok || closed.Question.State != core.StateExpired {
		t.Fatalf("an answer once the tick read the journal: %v; want refused, the question expired", err)
	}
}

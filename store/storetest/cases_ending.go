package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The end of a run cut short: the process killed after the store marked
// the run ended and before Service.EndRun expired each of its questions.

func init() {
	register("EndingsJournal", testEndingsJournal)
	register("AnEndRunCutShortIsFinishedByTheTick", testEndingFinishedByTick)
	register("AnAnswerToAnEndedRunsQuestionIsRefused", testEndingRefusesAnswers)
	register("ARepeatEndRunFinishesOneCutShort", testEndingRepeated)
}

// killedAfterMark is a store whose EndRun marks the run ended and then
// fails, so that nothing of Service.EndRun after the mark runs: the
// state a process killed right after the mark leaves behind.
type killedAfterMark struct{ core.Store }

func (k killedAfterMark) EndRun(ctx context.Context, run string, at time.Time) ([]core.QuestionID, error) {
	if _, err := k.Store.EndRun(ctx, run, at); err != nil {
		return nil, err
	}
	return nil, errors.New("killed after the run was marked ended")
}

// endingCutShort asks a decision (its Slack card recorded) and a
// clarification in one run, and ends the run through a Service that
// dies right after the store marks it ended. The questions are left
// open, and the run closed to asks.
func endingCutShort(e *env) (run core.Run, q, other *core.Question, card core.MessageRef) {
	t := e.t
	t.Helper()
	ctx := t.Context()
	run = core.Run{Agent: "agent-a", ID: core.RunID("run-killed-" + nextCall())}
	in := decision("ops")
	in.RunID = run.ID
	q = e.ask(in)
	other = e.ask(clarification(run.ID))
	post := e.claimAll(core.SurfaceSlack, "c1")
	if len(post) != 1 {
		t.Fatalf("posts to Slack: %+v", post)
	}
	card = core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: "1700000000.000100", Delivery: post[0].Key}
	if err := e.svc.RecordMessage(ctx, q.ID, card); err != nil {
		t.Fatal(err)
	}
	e.claimAll(core.SurfaceTelegram, "c1")
	live := e.store
	e.store = killedAfterMark{live}
	dying := e.service()
	e.store = live
	if _, err := dying.EndRun(ctx, run); err == nil {
		t.Fatal("the EndRun killed after the mark reported success")
	}
	for _, id := range []core.QuestionID{q.ID, other.ID} {
		if got := e.get(id); got.State != core.StateOpen {
			t.Fatalf("question %s right after the kill: %s, want open (as the crash left it)", id, got.State)
		}
	}
	if _, err := e.svc.Ask(ctx, clarification(run.ID)); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("an ask into the run marked ended: %v, want conflict", err)
	}
	return run, q, other, card
}

// checkExpired fails unless each question is closed by expiry, with one
// expired event.
func checkExpired(e *env, ids ...core.QuestionID) {
	e.t.Helper()
	for _, id := range ids {
		got := e.get(id)
		if got.State != core.StateExpired || core.CloserOf(got) != core.CloserExpiry || got.Resolution.Reason != core.ExpiredReason {
			e.t.Fatalf("question %s: state %s, resolution %+v; want expired by the run's end", id, got.State, got.Resolution)
		}
		kinds := coretest.Kinds(e.events(id))
		if n := len(slices.DeleteFunc(slices.Clone(kinds), func(k core.EventKind) bool { return k != core.EventExpired })); n != 1 {
			e.t.Fatalf("question %s events %v; want one expired event", id, kinds)
		}
	}
}

// checkCardUpdated fails unless exactly one update of card is due on its
// surface.
func checkCardUpdated(e *env, q core.QuestionID, card core.MessageRef) {
	e.t.Helper()
	ds := e.claimAll(card.Surface, "c1")
	if len(ds) != 1 || ds[0].Kind != core.DeliverUpdate || ds[0].QuestionID != q || ds[0].Message == nil || ds[0].Message.ID != card.ID {
		e.t.Fatalf("%s deliveries after the expiry: %+v; want the card's update", card.Surface, ds)
	}
}

// testEndingFinishedByTick: the bridge's own ticks expire the questions
// an ending cut short left open (once it is plainly no longer under
// way), with their expired events and card updates, without the agent
// or a person doing anything. Before, nothing did: they stayed open and
// answerable until their deadlines.
func testEndingFinishedByTick(t *testing.T, h Harness) {
	e := newEnv(t, h)
	_, q, other, card := endingCutShort(e)
	// The bridge comes back, and ticks for a while: far less than the
	// questions' 24h deadlines.
	e.restart()
	e.clock.Advance(10 * time.Minute)
	if _, err := e.svc.Tick(t.Context()); err != nil {
		t.Fatalf("tick: %v", err)
	}
	checkExpired(e, q.ID, other.ID)
	if got := coretest.Kinds(e.events(other.ID)); !cmp.Equal(got, []core.EventKind{core.EventAsked, core.EventExpired}) {
		t.Fatalf("events of the clarification: %v", got)
	}
	checkCardUpdated(e, q.ID, card)
	// Finished: a later tick finds nothing more to do.
	e.clock.Advance(10 * time.Minute)
	if _, err := e.svc.Tick(t.Context()); err != nil {
		t.Fatalf("second tick: %v", err)
	}
	if got := coretest.Kinds(e.events(other.ID)); len(got) != 2 {
		t.Fatalf("events after a second tick: %v", got)
	}
}

// testEndingRefusesAnswers: once a replica's tick has read the journal
// (the ending still young enough to be under way, so the tick leaves it
// be), an answer to a question of the run whose end was cut short is
// refused as one to an expired question (and the question expired, its
// card updated), not taken: an approve there could grant a standing
// approval for the run that has ended.
func testEndingRefusesAnswers(t *testing.T, h Harness) {
	e := newEnv(t, h)
	_, q, other, card := endingCutShort(e)
	if rep, err := e.svc.Tick(t.Context()); err != nil || rep.Expired != 0 {
		t.Fatalf("a tick right after the ending began: %+v, %v; want it left to the ending", rep, err)
	}
	_, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: apiDecider("late"), OptionID: "pg"})
	var closed *core.ClosedError
	if !errors.As(err, &closed) || closed.Question.State != core.StateExpired {
		t.Fatalf("an answer after the run was marked ended: %v; want a ClosedError saying expired", err)
	}
	checkExpired(e, q.ID)
	evs := e.events(q.ID)
	if got := coretest.Kinds(evs); !cmp.Equal(got, []core.EventKind{core.EventAsked, core.EventNotified, core.EventExpired, core.EventRefused}) {
		t.Fatalf("events %v", got)
	}
	checkCardUpdated(e, q.ID, card)
	_, err = e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: other.ID, Decider: apiDecider("late"), Text: "eu-west-1"})
	if !errors.As(err, &closed) || closed.Question.State != core.StateExpired {
		t.Fatalf("an answer to the other question: %v; want a ClosedError saying expired", err)
	}
}

// testEndingRepeated: the agent ending the run again finds the questions
// the first ending left open and expires them: the stores list a run's
// open questions however often it is ended.
func testEndingRepeated(t *testing.T, h Harness) {
	e := newEnv(t, h)
	run, q, other, card := endingCutShort(e)
	outs, err := e.svc.EndRun(t.Context(), run)
	if err != nil || len(outs) != 2 {
		t.Fatalf("the repeat EndRun: %+v, %v; want both questions expired", outs, err)
	}
	checkExpired(e, q.ID, other.ID)
	checkCardUpdated(e, q.ID, card)
}

// testEndingsJournal: the journal of the runs being ended keeps each
// run's first time, lists them all oldest first (then by run) with their
// times, drops a run that is done (twice, or one never there, is no
// error), and keeps what it holds across a restart.
func testEndingsJournal(t *testing.T, h Harness) {
	e := newEnv(t, h)
	ctx := t.Context()
	key := func(agent core.AgentID, id core.RunID) string { return core.Run{Agent: agent, ID: id}.Key() }
	a, b, c := key("agent-a", "run-a"), key("agent-a", "run-b"), key("agent-a", "run-c")
	list := func(want ...core.Ending) {
		t.Helper()
		got, err := e.store.UnfinishedEndings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("the journal (-want +got):\n%s", diff)
		}
	}
	list()
	for _, begin := range []struct {
		run string
		at  time.Time
	}{{b, epoch}, {a, epoch}, {c, epoch.Add(time.Minute)}, {b, epoch.Add(time.Hour)}} {
		if err := e.store.BeginEnding(ctx, begin.run, begin.at); err != nil {
			t.Fatalf("begin ending %q: %v", begin.run, err)
		}
	}
	list(core.Ending{Run: a, Began: epoch}, core.Ending{Run: b, Began: epoch}, core.Ending{Run: c, Began: epoch.Add(time.Minute)}) // b kept its first time
	for _, done := range []string{b, b, key("agent-a", "run-never")} {
		if err := e.store.EndingDone(ctx, done); err != nil {
			t.Fatalf("ending done %q: %v", done, err)
		}
	}
	left := []core.Ending{{Run: a, Began: epoch}, {Run: c, Began: epoch.Add(time.Minute)}}
	list(left...)
	e.restart()
	list(left...)
	if err := e.store.BeginEnding(ctx, "", epoch); core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("begin ending of no run: %v, want invalid", err)
	}
}

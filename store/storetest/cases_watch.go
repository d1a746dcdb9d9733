package storetest

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/google/go-cmp/cmp"
)

// The cases of a store's watches: the wake-up a close gives a waiter, the
// copy a transition is built on, and the watch that calls back.
func init() {
	register("WaitWakesOnClose", testWait)
	register("ReadToChangeFollowsChanges", testReadToChange)
	register("WatchFuncCallsBackOnChange", testWatchFunc)
	register("WatchedReadsFollowTheStoresWrites", testWatchedReads)
}

// testWatchedReads: a store may keep what a close left of a watched
// question, for the reads the close causes (each waiter's, after its
// wake-up), but a read never trails a later write of the same store: a
// card recorded after the close shows, and a purged question is gone.
func testWatchedReads(t *testing.T, h Harness) {
	e := newEnv(t, h)
	ctx := t.Context()
	q, gone := e.ask(decision("ops")), e.ask(clarification("run-1"))
	post := e.claimAll(core.SurfaceSlack, "c1")[0]
	for _, id := range []core.QuestionID{q.ID, gone.ID} {
		_, stop := e.store.Watch(id)
		defer stop()
	}
	if _, err := e.svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: apiDecider("op"), OptionID: "pg"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Decline(ctx, gone.ID, apiDecider("op")); err != nil {
		t.Fatal(err)
	}
	if got := e.get(gone.ID); got.State != core.StateDeclined {
		t.Fatalf("after the decline: %s", got.State)
	}
	if got := e.get(q.ID); got.State != core.StateAnswered || len(got.Messages) != 0 {
		t.Fatalf("after the close: %s with %d cards, want answered with none", got.State, len(got.Messages))
	}
	ref := core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: "1700000000.000500", Delivery: post.Key}
	if err := e.svc.RecordMessage(ctx, q.ID, ref); err != nil {
		t.Fatal(err)
	}
	if got := e.get(q.ID); len(got.Messages) != 1 || got.Messages[0].ID != ref.ID {
		t.Fatalf("after a card recorded late: cards %+v, want %s", got.Messages, ref.ID)
	}
	e.clock.Advance(31 * 24 * time.Hour)
	if n, err := e.svc.Purge(ctx); err != nil || n != 2 {
		t.Fatalf("purge: %d, %v; want 2", n, err)
	}
	for _, id := range []core.QuestionID{q.ID, gone.ID} {
		if got, err := e.store.Get(ctx, id); core.ErrorCode(err) != core.CodeNotFound {
			t.Fatalf("purged and watched: %+v, %v; want not found", got, err)
		}
	}
}

func testWait(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(clarification("run-1"))
	got := make(chan *core.Question, 1)
	errc := make(chan error, 1)
	// Watch is set up inside Wait before it reads, so answering right
	// after Wait starts can never be missed; the answer waits until the
	// waiter has started.
	started := make(chan struct{})
	go func() {
		close(started)
		w, err := e.svc.Wait(t.Context(), q.ID)
		got <- w
		errc <- err
	}()
	<-started
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: apiDecider("op"), Text: "us-east-2"}); err != nil {
		t.Fatal(err)
	}
	select {
	case w := <-got:
		if err := <-errc; err != nil || w.State != core.StateAnswered || w.Resolution.Answer != "us-east-2" {
			t.Fatalf("wait returned %+v, %v", w, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter was never woken")
	}
	// A wait whose context ends first reports the question still open.
	q2 := e.ask(clarification("run-1"))
	ctx, cancel := contextWithCancel(t)
	cancel()
	w, err := e.svc.Wait(ctx, q2.ID)
	if err != nil || w.State != core.StateOpen {
		t.Fatalf("cancelled wait: %+v, %v", w, err)
	}
}

// testReadToChange: what a transition is built on is the question as
// stored, or a copy the store keeps for a local watcher, which a change
// made elsewhere (on another replica, when the store has them) replaces
// by the time that change's wake-up arrives.
func testReadToChange(t *testing.T, h Harness) {
	e := newEnv(t, h)
	ctx := t.Context()
	if _, err := e.store.ReadToChange(ctx, core.NewID(0)); core.ErrorCode(err) != core.CodeNotFound {
		t.Fatalf("unknown id: %v, want not found", err)
	}
	q := e.ask(clarification("run-1"))
	changed, stop := e.store.Watch(q.ID)
	defer stop()
	read := e.get(q.ID)
	got, err := e.store.ReadToChange(ctx, q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(read, got); diff != "" {
		t.Fatalf("ReadToChange differs from Get (-get +read to change):\n%s", diff)
	}
	other := e.store
	if h.Replica != nil {
		other = h.Replica(t, e.store)
	}
	ppl, groups := people()
	svc := coretest.Service(t, other, coretest.Options{Routes: routes(), Clock: e.clock, People: ppl, Groups: groups})
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: apiDecider("op"), Text: "us-east-2"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up for the answer")
	}
	got, err = e.store.ReadToChange(ctx, q.ID)
	if err != nil || got.State != core.StateAnswered || got.Resolution == nil || got.Resolution.Answer != "us-east-2" {
		t.Fatalf("after the answer's wake-up: %+v, %v; want it answered", got, err)
	}
}

// testWatchFunc: a store calls back (core.Store's WatchFunc) the
// function of a watch on its question's change, made here or on another
// replica, and not for another question's, nor once the watch stopped.
func testWatchFunc(t *testing.T, h Harness) {
	e := newEnv(t, h)
	st := e.store
	q, other := e.ask(clarification("run-1")), e.ask(clarification("run-2"))
	woke, otherWoke := make(chan struct{}, 16), make(chan struct{}, 16)
	stop := st.WatchFunc(q.ID, func() { woke <- struct{}{} })
	defer st.WatchFunc(other.ID, func() { otherWoke <- struct{}{} })()
	elsewhere := e.store
	if h.Replica != nil {
		elsewhere = h.Replica(t, e.store)
	}
	ppl, groups := people()
	svc := coretest.Service(t, elsewhere, coretest.Options{Routes: routes(), Clock: e.clock, People: ppl, Groups: groups})
	if _, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: apiDecider("op"), Text: "us-east-2"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-woke:
	case <-time.After(10 * time.Second):
		t.Fatal("the watch's function was not called for the answer")
	}
	stop()
	if _, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: other.ID, Decider: apiDecider("op"), Text: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-otherWoke: // the other question's own watch; by then ours would have been called too
	case <-time.After(10 * time.Second):
		t.Fatal("the other question's watch was not called for its answer")
	}
	if n := len(woke); n != 0 {
		t.Fatalf("a stopped watch was called %d more times, for another question's answer", n)
	}
}

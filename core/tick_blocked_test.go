package core_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// unreadable is a store that cannot read the questions in bad.
type unreadable struct {
	core.Store
	bad map[core.QuestionID]bool
}

func (s *unreadable) Get(ctx context.Context, id core.QuestionID) (*core.Question, error) {
	if s.bad[id] {
		return nil, errors.New("unreadable: this record cannot be read")
	}
	return s.Store.Get(ctx, id)
}

// TestTickGoesPastQuestionsItCannotRead: a whole batch of due questions
// that cannot be read does not hold up the question due after them: the
// tick reports the failures and times it out. Before, every tick read
// the same first batch, failed on each, and the question behind them
// stayed open past its deadline for as long as they failed.
func TestTickGoesPastQuestionsItCannotRead(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	st := &unreadable{Store: coretest.OpenStore(t), bad: map[core.QuestionID]bool{}}
	svc := coretest.Service(t, st, coretest.Options{Clock: clock})
	var last core.QuestionID
	for i := range core.TickBatch + 1 {
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which?",
			Reversibility: core.Reversible, Timeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if i < core.TickBatch {
			st.bad[q.ID] = true // due first
		}
		last = q.ID
		clock.Advance(time.Millisecond)
	}
	clock.Advance(2 * time.Hour)
	for range 3 {
		rep, err := svc.Tick(ctx)
		if err == nil {
			t.Fatal("a tick over unreadable questions reported no failure")
		}
		if rep.TimedOut > 1 {
			t.Fatalf("a tick timed out %d questions; only one can be read", rep.TimedOut)
		}
		clock.Advance(time.Second)
	}
	q, err := st.Store.Get(ctx, last)
	if err != nil {
		t.Fatal(err)
	}
	if q.State != core.StateTimedOut {
		t.Fatalf("the question due after %d unreadable ones is %s after three ticks; want timed_out", core.TickBatch, q.State)
	}
}

// firstRead is a store that cannot read any question, and records the
// first question each tick tried.
type firstRead struct {
	core.Store
	mu    sync.Mutex
	tick  bool
	first []core.QuestionID
}

func (s *firstRead) Get(_ context.Context, id core.QuestionID) (*core.Question, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tick {
		s.first, s.tick = append(s.first, id), false
	}
	return nil, errors.New("firstRead: this record cannot be read")
}

// TestTicksStartAtDifferentPlaces: replicas tick over the same page of
// due questions, so each tick starts at its own place in it, for
// replicas ticking together to move different questions first. Before,
// every tick of every replica began at the same first question and went
// through the page in the same order, racing the others for each.
func TestTicksStartAtDifferentPlaces(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	st := &firstRead{Store: coretest.OpenStore(t)}
	svc := coretest.Service(t, st, coretest.Options{Clock: clock})
	for range 10 {
		if _, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which?",
			Reversibility: core.Reversible, Timeout: time.Hour}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Millisecond)
	}
	clock.Advance(2 * time.Hour)
	starts := map[core.QuestionID]bool{}
	for range 20 {
		st.mu.Lock()
		st.tick = true
		st.mu.Unlock()
		if _, err := svc.Tick(ctx); err == nil {
			t.Fatal("a tick over unreadable questions reported no failure")
		}
	}
	for _, id := range st.first {
		starts[id] = true
	}
	if len(st.first) != 20 || len(starts) < 2 {
		t.Fatalf("20 ticks over 10 due questions began at %d different ones (%d ticks read any); want them spread", len(starts), len(st.first))
	}
}

package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// triedStore is a real store that counts how often the chokepoint reads
// and commits, refuses the first lose commits as stale (as a store does
// when another change landed first), and runs meanwhile, once, before
// the next commit (another change landing first for real).
type triedStore struct {
	core.Store
	mu                     sync.Mutex
	copies, gets, resolves int
	lose                   int
	meanwhile              func()
}

func (s *triedStore) ReadToChange(ctx context.Context, id core.QuestionID) (*core.Question, error) {
	s.mu.Lock()
	s.copies++
	s.mu.Unlock()
	return s.Store.ReadToChange(ctx, id)
}

func (s *triedStore) Get(ctx context.Context, id core.QuestionID) (*core.Question, error) {
	s.mu.Lock()
	s.gets++
	s.mu.Unlock()
	return s.Store.Get(ctx, id)
}

func (s *triedStore) Commit(ctx context.Context, c core.Change) (*core.Question, error) {
	s.mu.Lock()
	s.resolves++
	lose := s.lose > 0
	s.lose--
	meanwhile := s.meanwhile
	s.meanwhile = nil
	s.mu.Unlock()
	if lose {
		return nil, &core.StaleError{}
	}
	if meanwhile != nil {
		meanwhile()
	}
	return s.Store.Commit(ctx, c)
}

func (s *triedStore) counts() [3]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return [3]int{s.copies, s.gets, s.resolves}
}

// passes is an observer that counts passes through the chokepoint and
// refusals.
type passes struct {
	mu       sync.Mutex
	resolved map[string]int
	refused  map[string]int
}

func (p *passes) Resolved(result string, _ time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resolved[result]++
}

func (p *passes) Refused(door, reason string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refused[door+"/"+reason]++
}

func (p *passes) Asked(*core.Question)                          {}
func (p *passes) Closed(*core.Question)                         {}
func (p *passes) Delivered(core.Surface, string, time.Duration) {}
func (p *passes) Woke(time.Duration)                            {}
func (p *passes) Parked(int)                                    {}
func (p *passes) Unrecorded(core.EventKind)                     {}

// batchRuns numbers batchAsk's runs: a batch resent with the same call
// ids in the same run is a repeat of it, and each batchAsk is a new one.
var batchRuns atomic.Int64

func batchAsk() core.AskInput {
	return core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: core.RunID(fmt.Sprintf("run-%d", batchRuns.Add(1))), Text: "Write these?",
		Reversibility: core.Reversible, Calls: []core.CallInput{
			{ToolCallID: "c1", Tool: "write_file", Arguments: json.RawMessage(`{"path":"/a"}`)},
			{ToolCallID: "c2", Tool: "write_file", Arguments: json.RawMessage(`{"path":"/b"}`)},
		}}
}

// TestClosedIsNotTriedAgain: "approve all" on a closed question is one
// read and no store operation; being closed is final.
func TestClosedIsNotTriedAgain(t *testing.T) {
	st := &triedStore{Store: coretest.OpenStore(t)}
	svc := coretest.Service(t, st, coretest.Options{})
	obs := &passes{resolved: map[string]int{}, refused: map[string]int{}}
	ctx := t.Context()
	q, err := svc.Ask(ctx, batchAsk())
	if err != nil {
		t.Fatal(err)
	}
	ada := core.Decider{Surface: core.SurfaceAPI, ID: "ada", Name: "Ada"}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: ada, OptionID: core.DenyOption}); err != nil {
		t.Fatal(err)
	}
	svc.SetObserver(obs)
	before := st.counts()
	_, err = svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: ada, OptionID: core.ApproveOption})
	if !errors.Is(err, core.ErrClosed) {
		t.Fatalf("approve all after the close: %v", err)
	}
	after := st.counts()
	if reads, resolves := after[0]+after[1]-before[0]-before[1], after[2]-before[2]; reads != 1 || resolves != 0 {
		t.Errorf("the late attempt read %d times and resolved %d times; want 1 and 0", reads, resolves)
	}
	if obs.resolved[core.ResolveLost] != 1 || len(obs.resolved) != 1 || obs.refused["answer/"+core.RefusedClosed] != 1 || len(obs.refused) != 1 {
		t.Errorf("observed %v and refusals %v; want one lost pass and one closed refusal", obs.resolved, obs.refused)
	}
}

// TestLostCallIsTriedAgainOnce: "approve all" whose change went stale
// (a decision landed first) is computed again on the question as stored,
// and the attempt, which then closes the batch, is one pass with no
// refusal; "approve all" that keeps going stale gives up after a bound
// and is one pass that failed: no refusal of the person's answer, which
// broke no rule, and never a loss.
func TestLostCallIsTriedAgainOnce(t *testing.T) {
	st := &triedStore{Store: coretest.OpenStore(t)}
	svc := coretest.Service(t, st, coretest.Options{})
	obs := &passes{resolved: map[string]int{}, refused: map[string]int{}}
	svc.SetObserver(obs)
	ctx := t.Context()
	ada := core.Decider{Surface: core.SurfaceAPI, ID: "ada", Name: "Ada"}

	q, err := svc.Ask(ctx, batchAsk())
	if err != nil {
		t.Fatal(err)
	}
	st.lose = 1
	before := st.counts()
	o, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: ada, OptionID: core.ApproveOption})
	if err != nil || !o.Closed {
		t.Fatalf("approve all after one lost call: %+v, %v", o, err)
	}
	after := st.counts()
	if copies, gets, resolves := after[0]-before[0], after[1]-before[1], after[2]-before[2]; copies != 1 || gets != 1 || resolves != 2 {
		t.Errorf("reads %d (copy) and %d (as stored), resolves %d; want 1, 1 and 2", copies, gets, resolves)
	}
	if obs.resolved[core.ResolveClosed] != 1 || len(obs.resolved) != 1 || len(obs.refused) != 0 {
		t.Errorf("observed %v and refusals %v; want one closing pass", obs.resolved, obs.refused)
	}

	// One that keeps losing.
	q, err = svc.Ask(ctx, batchAsk())
	if err != nil {
		t.Fatal(err)
	}
	clear(obs.resolved)
	st.lose = 1000
	before = st.counts()
	_, err = svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: ada, OptionID: core.ApproveOption})
	st.lose = 0
	if core.ErrorCode(err) != core.CodeConflict || errors.Is(err, core.ErrClosed) {
		t.Fatalf("approve all that always loses: %v; want a conflict, not closed", err)
	}
	if tries := st.counts()[2] - before[2]; tries < 2 || tries > 64 {
		t.Errorf("tried %d times; want several, and bounded", tries)
	}
	if obs.resolved[core.ResolveError] != 1 || len(obs.resolved) != 1 || len(obs.refused) != 0 {
		t.Errorf("observed %v and refusals %v; want one failed pass and no refusal", obs.resolved, obs.refused)
	}
	// A decision of a named call that another decision of the same call
	// beat is tried again once, on the question as stored, which shows
	// the call decided: the caller hears so.
	bob := core.Decider{Surface: core.SurfaceAPI, ID: "bob", Name: "Bob"}
	st.meanwhile = func() {
		if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: bob,
			Calls: []core.CallDecision{{ToolCallID: "c1", OptionID: core.DenyOption}}}); err != nil {
			t.Errorf("bob's decision: %v", err)
		}
	}
	before = st.counts()
	_, err = svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: ada,
		Calls: []core.CallDecision{{ToolCallID: "c1", OptionID: core.ApproveOption}}})
	if core.ErrorCode(err) != core.CodeConflict || !strings.Contains(core.ErrorMessage(err), "already decided") {
		t.Fatalf("a named call that lost: %v", err)
	}
	if tries := st.counts()[2] - before[2]; tries != 2 { // ada's stale one and bob's
		t.Errorf("commits %d; want 2", tries)
	}
	if got, err := svc.Get(ctx, q.ID); err != nil || len(got.Answers) != 1 || got.Answers[0].Decider.ID != "bob" {
		t.Fatalf("stored after the race: %+v, %v; want bob's decision alone", got, err)
	}
}

package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// triedStore is a real store that counts how often the chokepoint reads
// and resolves, and refuses the first lose transitions as a store refuses
// one that names a part already decided.
type triedStore struct {
	core.Store
	mu                     sync.Mutex
	copies, gets, resolves int
	lose                   int
}

func (s *triedStore) ReadToChange(ctx context.Context, id string) (*core.Question, error) {
	s.mu.Lock()
	s.copies++
	s.mu.Unlock()
	return s.Store.ReadToChange(ctx, id)
}

func (s *triedStore) Get(ctx context.Context, id string) (*core.Question, error) {
	s.mu.Lock()
	s.gets++
	s.mu.Unlock()
	return s.Store.Get(ctx, id)
}

func (s *triedStore) Resolve(ctx context.Context, t core.Transition) (*core.Question, error) {
	s.mu.Lock()
	s.resolves++
	lose := s.lose > 0
	s.lose--
	s.mu.Unlock()
	if lose {
		return nil, core.Errorf(core.CodeConflict, "resolve", "a form item of question %s already has an answer", t.QuestionID)
	}
	return s.Store.Resolve(ctx, t)
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

func batchAsk() core.AskInput {
	return core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", Text: "Write these?",
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

// TestLostCallIsTriedAgainOnce: "approve all" that loses a call to a
// decision that landed first is tried again on the question as stored,
// and the attempt, which then closes the batch, is one pass with no
// refusal; "approve all" that keeps losing gives up after a bound and
// is one refusal.
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
	st.lose = 100
	before = st.counts()
	_, err = svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: ada, OptionID: core.ApproveOption})
	st.lose = 0
	if core.ErrorCode(err) != core.CodeConflict || errors.Is(err, core.ErrClosed) {
		t.Fatalf("approve all that always loses: %v; want a conflict, not closed", err)
	}
	if tries := st.counts()[2] - before[2]; tries < 2 || tries > 10 {
		t.Errorf("tried %d times; want a few, and bounded", tries)
	}
	if obs.resolved[core.ResolveInvalid] != 1 || len(obs.resolved) != 1 || obs.refused["answer/"+core.RefusedInvalid] != 1 || len(obs.refused) != 1 {
		t.Errorf("observed %v and refusals %v; want one refused pass", obs.resolved, obs.refused)
	}
	// A decision of named calls is not tried again: it names what it
	// decides, and a lost call is the caller's to hear about.
	st.lose = 1
	before = st.counts()
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: ada,
		Calls: []core.CallDecision{{ToolCallID: "c1", OptionID: core.ApproveOption}}}); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("a named call that lost: %v", err)
	}
	if tries := st.counts()[2] - before[2]; tries != 1 {
		t.Errorf("a named call was tried %d times; want 1", tries)
	}
}

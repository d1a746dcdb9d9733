package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestRacingRepeatsOfAnAskClosedAtOnceAllGetIt: resends of one ask that a
// policy rule decides (or some of whose batch calls it decides) race the
// first ask's own close at the ask; every one gets the question, none a
// 409. Before, the loser of the close was told the question "was already
// closed by askbridge", sometimes the very ask that parked it, and a
// batch's loser that one of its calls "already has an answer".
func TestRacingRepeatsOfAnAskClosedAtOnceAllGetIt(t *testing.T) {
	for name, open := range coretest.Stores {
		t.Run(name, func(t *testing.T) {
			routes := coretest.APIRoutes()
			routes["guarded"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}},
				Rules: []core.Rule{{Name: "reads", When: `tool == "read_file"`, Decide: core.DecideAllow}}}
			svc := coretest.Service(t, open(t), coretest.Options{Routes: routes})
			for round := range 20 {
				one := core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", ToolCallID: fmt.Sprintf("t%d", round),
					Route: "guarded", Text: "Read?", Reversibility: core.Reversible, Tool: "read_file", Arguments: json.RawMessage(`{"p":1}`)}
				batch := core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Route: "guarded", Text: "These?", Reversibility: core.Reversible,
					Calls: []core.CallInput{{ToolCallID: fmt.Sprintf("b%d-1", round), Tool: "read_file", Arguments: json.RawMessage(`{}`)},
						{ToolCallID: fmt.Sprintf("b%d-2", round), Tool: "write_file", Arguments: json.RawMessage(`{}`)}}}
				for _, in := range []core.AskInput{one, batch} {
					var wg sync.WaitGroup
					ids := make([]core.QuestionID, 4)
					for i := range 4 {
						wg.Go(func() {
							q, _, err := svc.AskOrRepeat(t.Context(), in)
							if err != nil {
								t.Errorf("round %d: a send of the same ask got %v", round, err)
								return
							}
							ids[i] = q.ID
						})
					}
					wg.Wait()
					for _, id := range ids[1:] {
						if id != ids[0] {
							t.Fatalf("round %d: the sends got questions %v", round, ids)
						}
					}
				}
			}
		})
	}
}

// TestABatchResentWithItsCallIdsIsTheSameAsk: a batch names its calls,
// so a batch resent with the same calls (a lost reply, an MCP host's
// resend) is the same ask, whatever key it carries: one question, not
// two open cards for the same calls. Resent in another order, it is
// refused as a different body, never asked again.
func TestABatchResentWithItsCallIdsIsTheSameAsk(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	in := core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r1", Text: "These?", Reversibility: core.Reversible,
		Calls: []core.CallInput{{ToolCallID: "toolu_1", Tool: "write", Arguments: json.RawMessage(`{"p":1}`)},
			{ToolCallID: "toolu_2", Tool: "write", Arguments: json.RawMessage(`{"p":2}`)}}}
	first, repeat, err := svc.AskOrRepeat(t.Context(), in)
	if err != nil || repeat {
		t.Fatalf("first: %v, repeat %v", err, repeat)
	}
	in.IdempotencyKey = "another-key"
	again, repeat, err := svc.AskOrRepeat(t.Context(), in)
	if err != nil || !repeat || again.ID != first.ID {
		t.Fatalf("the batch resent: %+v, repeat %v, %v; want %s", again, repeat, err, first.ID)
	}
	in.Calls[0], in.Calls[1] = in.Calls[1], in.Calls[0]
	if again, repeat, err := svc.AskOrRepeat(t.Context(), in); err == nil && (!repeat || again.ID != first.ID) {
		t.Fatalf("the batch resent in another order: question %s, repeat %v; want %s", again.ID, repeat, first.ID)
	}
	open, _, err := svc.ListOpen(t.Context(), "", 10)
	if err != nil || len(open) != 1 {
		t.Fatalf("open after the resend: %d, %v; want one", len(open), err)
	}
}

// failOnce fails the next Commit, as a Redis failover's 503 would.
type failOnce struct {
	core.Store
	next atomic.Bool
}

func (f *failOnce) Commit(ctx context.Context, c core.Change) (*core.Question, error) {
	if f.next.Swap(false) {
		return nil, fmt.Errorf("commit: %w", core.ErrUnavailable)
	}
	return f.Store.Commit(ctx, c)
}

// TestARetriedAskIsClosedByTheStandingApprovalThatCoveredIt: an ask that
// a standing approval covers is parked without cards and then closed by
// it; when that close fails (a failover), the agent's retry closes it by
// the same standing approval. Before, the retry left it open with no
// card anywhere, until its deadline.
func TestARetriedAskIsClosedByTheStandingApprovalThatCoveredIt(t *testing.T) {
	st := &failOnce{Store: coretest.OpenStore(t)}
	svc := coretest.Service(t, st, coretest.Options{})
	ask := func(id string) (*core.Question, bool, error) {
		return svc.AskOrRepeat(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r1", ToolCallID: id, Text: "Lint?",
			Reversibility: core.Reversible, Tool: "lint", Arguments: json.RawMessage(`{}`)})
	}
	g, _, err := ask("t1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: g.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "alice"},
		OptionID: core.ApproveOption, Standing: &core.StandingRequest{Scope: core.StandingRun}}); err != nil {
		t.Fatal(err)
	}
	st.next.Store(true)
	if _, _, err := ask("t2"); !core.Unavailable(err) {
		t.Fatalf("the first ask, its close failing: %v", err)
	}
	q, repeat, err := ask("t2")
	if err != nil || !repeat || q.State != core.StateAnswered || core.CloserOf(q) != core.CloserStanding {
		t.Fatalf("the retry: %+v, repeat %v, %v; want it closed by the standing approval", q, repeat, err)
	}
}

// cutShort cancels its context right after the store marks the run
// ended, as an agent whose client times out or exits would.
type cutShort struct {
	core.Store
	cancel context.CancelFunc
}

func (c cutShort) EndRun(ctx context.Context, run string, at time.Time) ([]core.QuestionID, error) {
	ids, err := c.Store.EndRun(ctx, run, at)
	c.cancel()
	return ids, err
}

// TestAnEndRunCutShortStillExpiresTheRun: once the run is marked ended,
// its questions are expired and its standing approvals ended even if
// the caller goes. Before, the questions left stayed open and answerable
// until their deadlines.
func TestAnEndRunCutShortStillExpiresTheRun(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	st := cutShort{Store: coretest.OpenStore(t), cancel: cancel}
	svc := coretest.Service(t, st, coretest.Options{})
	for i := range 20 {
		if _, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r1", ToolCallID: fmt.Sprint(i), Text: "Lint?",
			Reversibility: core.Reversible, Tool: "lint", Arguments: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.EndRun(ctx, core.Run{Agent: "a", ID: "r1"}); err != nil {
		t.Fatal(err)
	}
	open, _, err := svc.ListOpen(t.Context(), "", 50)
	if err != nil || len(open) != 0 {
		t.Fatalf("%d of the ended run's questions still open, %v", len(open), err)
	}
}

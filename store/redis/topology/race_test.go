package topology_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// race asks questions through one replica of the bridge and has three
// replicas, each on a store and a client of its own, answer every one
// of them at once, several times each: every question closes once, and
// every loser is told the one winner.
func race(t *testing.T, h *harness) {
	const (
		replicas  = 3
		questions = 20
		each      = 4 // answers per replica and question
	)
	first := h.Open(t)
	stores := []core.Store{first}
	for range replicas - 1 {
		stores = append(stores, h.Replica(t, first))
	}
	var svcs []*core.Service
	for _, s := range stores {
		svcs = append(svcs, coretest.Service(t, s, coretest.Options{}))
	}
	ctx := t.Context()
	var qs []*core.Question
	for i := range questions {
		q, err := svcs[0].Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "agent-a", RunID: "run-race",
			ToolCallID: fmt.Sprintf("call-%d", i), Text: "Which region?", Reversibility: core.HardToReverse})
		if err != nil {
			t.Fatal(err)
		}
		qs = append(qs, q)
	}
	type result struct {
		who    string
		closed *core.ClosedError
	}
	results := make([][]result, questions)
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for qi, q := range qs {
		for r, svc := range svcs {
			for n := range each {
				who := fmt.Sprintf("op-%d-%d", r, n)
				wg.Go(func() {
					<-start
					o, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID,
						Decider: core.Decider{Surface: core.SurfaceAPI, ID: who, Name: who}, Text: "from " + who})
					var closed *core.ClosedError
					switch {
					case err == nil && o.Closed:
						closed = nil
					case errors.As(err, &closed):
					default:
						t.Errorf("%s on %s: outcome %+v, err %v", who, q.ID, o, err)
						return
					}
					mu.Lock()
					results[qi] = append(results[qi], result{who, closed})
					mu.Unlock()
				})
			}
		}
	}
	close(start)
	wg.Wait()
	for qi, q := range qs {
		var winner string
		for _, r := range results[qi] {
			if r.closed == nil {
				if winner != "" {
					t.Fatalf("%s closed twice: by %s and %s", q.ID, winner, r.who)
				}
				winner = r.who
			}
		}
		if winner == "" || len(results[qi]) != replicas*each {
			t.Fatalf("%s: winner %q among %d results", q.ID, winner, len(results[qi]))
		}
		for _, r := range results[qi] {
			if r.closed != nil && r.closed.Question.Resolution.Decider.ID != winner {
				t.Fatalf("%s: %s was told %s won, not %s", q.ID, r.who, r.closed.Question.Resolution.Decider.ID, winner)
			}
		}
		for _, svc := range svcs {
			got, err := svc.Get(ctx, q.ID)
			if err != nil || got.Resolution == nil || got.Resolution.Answer != "from "+winner {
				t.Fatalf("%s as stored: %+v, %v; want answered by %s", q.ID, got.Resolution, err, winner)
			}
		}
		answered := 0
		for _, e := range coretest.EventsOf(t, stores[qi%replicas], q.ID) {
			if e.Kind == core.EventAnswered {
				answered++
			}
		}
		if answered != 1 {
			t.Fatalf("%s has %d answered events", q.ID, answered)
		}
	}
}

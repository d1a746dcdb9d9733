package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/google/go-cmp/cmp"
)

func init() {
	registerDomain("OneLateAttemptIsOneRefusal", testOneRefusal)
}

// tally is an observer that counts what it is told, by door and reason
// or by result.
type tally struct {
	mu         sync.Mutex
	refused    map[string]int // "door/reason"
	resolved   map[string]int // result
	unrecorded map[core.EventKind]int
}

func newTally() *tally {
	return &tally{refused: map[string]int{}, resolved: map[string]int{}, unrecorded: map[core.EventKind]int{}}
}

func (c *tally) Unrecorded(k core.EventKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unrecorded[k]++
}

func (c *tally) Refused(door, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refused[door+"/"+reason]++
}

func (c *tally) Resolved(result string, _ time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resolved[result]++
}

func (c *tally) Asked(*core.Question)                          {}
func (c *tally) Closed(*core.Question)                         {}
func (c *tally) Delivered(core.Surface, string, time.Duration) {}
func (c *tally) Woke(time.Duration)                            {}
func (c *tally) Parked(int)                                    {}

// testOneRefusal: one attempt that changes nothing, of every kind, is one
// refused event, one refusal and one pass through the chokepoint, however
// many times the chokepoint may try the store for some answers ("approve
// all" on a batch tries again after a call decided first).
func testOneRefusal(t *testing.T, h Harness) {
	e := newEnv(t, h)
	op := apiDecider("op")
	late := apiDecider("late")
	answer := func(id core.QuestionID, d core.Decider, in core.AnswerInput) error {
		in.QuestionID, in.Decider = id, d
		_, err := e.svc.Answer(t.Context(), in)
		return err
	}
	approve := core.AnswerInput{OptionID: core.ApproveOption}
	deny := core.AnswerInput{OptionID: core.DenyOption}
	tests := []struct {
		name string
		ask  core.AskInput
		// closeIt closes the question (or, for a double vote, votes);
		// try is the one attempt that must change nothing.
		closeIt, try func(id core.QuestionID) error
		// refusal and result are what the observer must hear, once.
		refusal, result string
	}{
		{"late approve", approvalOn(core.DefaultRoute),
			func(id core.QuestionID) error { return answer(id, op, approve) },
			func(id core.QuestionID) error { return answer(id, late, approve) }, core.RefusedClosed, core.ResolveLost},
		{"late deny", approvalOn(core.DefaultRoute),
			func(id core.QuestionID) error { return answer(id, op, approve) },
			func(id core.QuestionID) error { return answer(id, late, deny) }, core.RefusedClosed, core.ResolveLost},
		{"late decline of an approval", approvalOn(core.DefaultRoute),
			func(id core.QuestionID) error { return answer(id, op, deny) },
			func(id core.QuestionID) error { _, err := e.svc.Decline(t.Context(), id, late); return err }, core.RefusedClosed, core.ResolveLost},
		{"late clarification answer", clarification("run-1"),
			func(id core.QuestionID) error { return answer(id, op, core.AnswerInput{Text: "eu-west-1"}) },
			func(id core.QuestionID) error { return answer(id, late, core.AnswerInput{Text: "us-east-1"}) }, core.RefusedClosed, core.ResolveLost},
		{"late decision answer", decision(core.DefaultRoute),
			func(id core.QuestionID) error { return answer(id, op, core.AnswerInput{OptionID: "pg"}) },
			func(id core.QuestionID) error { return answer(id, late, core.AnswerInput{OptionID: "ddb"}) }, core.RefusedClosed, core.ResolveLost},
		{"late form item", formOn(core.DefaultRoute),
			func(id core.QuestionID) error {
				return answer(id, op, core.AnswerInput{Items: []core.ItemInput{{ItemID: "day", OptionID: "mon"}, {ItemID: "notes", OptionID: "short"}}})
			},
			func(id core.QuestionID) error {
				return answer(id, late, core.AnswerInput{Items: []core.ItemInput{{ItemID: "day", OptionID: "fri"}}})
			}, core.RefusedClosed, core.ResolveLost},
		{"late approve all of a batch", batchOn(core.DefaultRoute, 3),
			func(id core.QuestionID) error { return answer(id, op, deny) },
			func(id core.QuestionID) error { return answer(id, late, approve) }, core.RefusedClosed, core.ResolveLost},
		{"late decision of one call of a batch", batchOn(core.DefaultRoute, 3),
			func(id core.QuestionID) error { return answer(id, op, approve) },
			func(id core.QuestionID) error {
				q := e.get(id)
				return answer(id, late, core.AnswerInput{Calls: []core.CallDecision{{ToolCallID: q.Calls[1].ToolCallID, OptionID: core.DenyOption}}})
			}, core.RefusedClosed, core.ResolveLost},
		{"late vote", approvalOn("two"),
			func(id core.QuestionID) error {
				if err := answer(id, aliceOn(core.SurfaceAPI), approve); err != nil {
					return err
				}
				return answer(id, bobTelegram, approve)
			},
			func(id core.QuestionID) error { return answer(id, carol, approve) }, core.RefusedClosed, core.ResolveLost},
		{"second vote by one person", approvalOn("two"),
			func(id core.QuestionID) error { return answer(id, bobTelegram, approve) },
			func(id core.QuestionID) error { return answer(id, bobSlack, deny) }, core.RefusedClosed, core.ResolveLost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := e.ask(tt.ask)
			if err := tt.closeIt(q.ID); err != nil {
				t.Fatalf("closing it: %v", err)
			}
			before := e.get(q.ID)
			refusedBefore := countKind(e.events(q.ID), core.EventRefused)
			obs := newTally()
			e.svc.SetObserver(obs)
			defer e.svc.SetObserver(nil)

			err := tt.try(q.ID)
			if core.ErrorCode(err) != core.CodeConflict {
				t.Fatalf("the attempt: %v, want a conflict", err)
			}
			// A second vote lost to the person's first: they are told it
			// already counted; every other late attempt, who closed it.
			if tt.refusal == core.RefusedClosed && !errors.Is(err, core.ErrClosed) && core.ErrorMessage(err) != core.AlreadyCountedMessage {
				t.Fatalf("the attempt: %v, want told the question is closed", err)
			}
			if got := countKind(e.events(q.ID), core.EventRefused) - refusedBefore; got != 1 {
				t.Errorf("refused events added: %d, want 1", got)
			}
			wantRefused := map[string]int{"answer/" + tt.refusal: 1}
			wantResolved := map[string]int{tt.result: 1}
			if diff := cmp.Diff(wantRefused, obs.refused); diff != "" {
				t.Errorf("refusals heard (-want +got):\n%s", diff)
			}
			if len(obs.unrecorded) != 0 {
				t.Errorf("events heard unrecorded: %v, want none", obs.unrecorded)
			}
			if diff := cmp.Diff(wantResolved, obs.resolved); diff != "" {
				t.Errorf("passes through the chokepoint heard (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, e.get(q.ID)); diff != "" {
				t.Errorf("the attempt changed the question (-before +after):\n%s", diff)
			}
		})
	}
}

func countKind(evs []core.Event, k core.EventKind) int {
	n := 0
	for _, ev := range evs {
		if ev.Kind == k {
			n++
		}
	}
	return n
}

// formOn is form() on another route.
func formOn(route string) core.AskInput {
	in := form()
	in.Route, in.ToolCallID = route, nextCall()
	return in
}

// batchOn is batch(n) on another route.
func batchOn(route string, n int) core.AskInput {
	in := batch(n)
	in.Route = route
	return in
}

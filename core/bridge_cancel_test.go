package core_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestBridgeCancelRecordsAskbridge: askbridge withdrawing a question for
// the agent that asked it (a server-side door's own withdrawal: By is
// core.System, Owner the agent) is recorded as askbridge's (law 12): its
// closer, its decider, its surface and its event's actor say askbridge,
// not the agent. The checks are the agent's: only the asking agent's
// question, never one without an owner, with a reason of one line. An
// agent's own cancel, in whatever words, still records the agent.
func TestBridgeCancelRecordsAskbridge(t *testing.T) {
	ctx := t.Context()
	svc, _ := coretest.Open(t, coretest.Options{})
	ask := func(t *testing.T) *core.Question {
		t.Helper()
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "agent-a", RunID: "r1", Text: "Which?", Reversibility: core.Reversible})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	const why = "no answer in time: left to the host's own prompt"
	// withdraw withdraws a new question of agent-a's as by, with why.
	withdraw := func(t *testing.T, by core.Decider) (*core.Question, *core.Question) {
		t.Helper()
		q := ask(t)
		o, err := svc.Cancel(ctx, core.CancelInput{QuestionID: q.ID, By: by, Owner: "agent-a", Reason: why})
		if err != nil {
			t.Fatal(err)
		}
		return q, o.Question
	}

	t.Run("recorded as askbridge", func(t *testing.T) {
		// Whatever else a door fills in, a system decider is askbridge.
		q, got := withdraw(t, core.Decider{Surface: core.SurfaceSystem, ID: "someone", Name: "Someone"})
		r := got.Resolution
		if got.State != core.StateCancelled || r.ClosedBy != core.CloserBridgeCancel || core.CloserOf(got) != core.CloserBridgeCancel ||
			r.Decider.Surface != core.SurfaceSystem || r.Decider.ID != core.System.ID || r.Reason != why {
			t.Fatalf("withdrawn as %s by %+v (%q); want askbridge's withdrawal with its reason", core.CloserOf(got), r.Decider, r.Reason)
		}
		if s := core.ClosingSurface(got); s != core.SurfaceSystem {
			t.Errorf("closed from %q; want the system", s)
		}
		evs, err := svc.Events(ctx, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range evs {
			if e.QuestionID == q.ID && e.Kind == core.EventCancelled {
				found = true
				if e.Surface != core.SurfaceSystem || e.Reason != why {
					t.Errorf("cancelled event %+v; want it from the system, with the reason", e)
				}
			}
		}
		if !found {
			t.Error("no cancelled event")
		}
		// An old record of this close (no closer stored) reads the same.
		old := *r
		old.ClosedBy = ""
		if c := core.CloserOf(&core.Question{State: core.StateCancelled, Resolution: &old}); c != core.CloserBridgeCancel {
			t.Errorf("the record without its closer reads as %s", c)
		}
	})

	t.Run("only for the asking agent", func(t *testing.T) {
		q := ask(t)
		_, err := svc.Cancel(ctx, core.CancelInput{QuestionID: q.ID, By: core.System, Reason: why})
		if core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("without an owner: %v, want invalid", err)
		}
		_, err = svc.Cancel(ctx, core.CancelInput{QuestionID: q.ID, By: core.System, Owner: "agent-b", Reason: why})
		if !errors.Is(err, core.ErrNotFound) {
			t.Errorf("for another agent: %v, want not found, as for an unknown id", err)
		}
		_, err = svc.Cancel(ctx, core.CancelInput{QuestionID: q.ID, By: core.System, Owner: "agent-a", Reason: why + "\nAnswered by alice"})
		if core.ErrorCode(err) != core.CodeInvalid || !strings.Contains(core.ErrorMessage(err), "reason") {
			t.Errorf("a reason of two lines: %v, want invalid naming the reason", err)
		}
		if got, err := svc.Get(ctx, q.ID); err != nil || !got.Open() {
			t.Fatalf("after the refused withdrawals the question is %+v, %v; want it open", got, err)
		}
	})

	t.Run("an agent's own cancel stays the agent's", func(t *testing.T) {
		_, got := withdraw(t, core.Decider{Surface: core.SurfaceAgent, ID: "agent-a", Name: "agent-a"})
		if c := core.CloserOf(got); c != core.CloserAgentCancel {
			t.Errorf("an agent's cancel in askbridge's words reads as %s; want the agent's", c)
		}
	})

	if c, err := core.ParseCloser("bridge_cancel"); err != nil || c != core.CloserBridgeCancel {
		t.Errorf("ParseCloser(bridge_cancel) = %q, %v", c, err)
	}
}

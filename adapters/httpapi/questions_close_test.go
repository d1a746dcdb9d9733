package httpapi_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

func TestCancelAndEndRun(t *testing.T) {
	e := newEnv(t)
	ctx := e.ctx()
	a, b := e.as(agentA), e.as(agentB)

	id := e.ask(agentA, "run-1")
	out, err := a.Cancel(ctx, id, "found it in the docs")
	if err != nil || !out.Closed || out.Question.State != core.StateCancelled || out.Question.Resolution.Reason != "found it in the docs" {
		t.Fatalf("cancel: %+v, %v", out, err)
	}
	id2 := e.ask(agentA, "run-1")
	if out, err := e.as(operator).Cancel(ctx, id2, ""); err != nil || out.Question.State != core.StateCancelled {
		t.Fatalf("operator cancel: %+v, %v", out, err)
	}

	// Two agents share a run id: each ends only its own questions.
	a1, a2 := e.ask(agentA, "run-2"), e.ask(agentA, "run-2")
	b1 := e.ask(agentB, "run-2")
	got, err := b.EndRun(ctx, "run-2")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]core.QuestionID{b1}, got.Expired); diff != "" || got.RunID != "run-2" {
		t.Fatalf("agent-b ended run-2: %+v (%s)", got, diff)
	}
	got, err = a.EndRun(ctx, "run-2")
	if err != nil {
		t.Fatal(err)
	}
	want := []core.QuestionID{a1, a2}
	if diff := cmp.Diff(want, got.Expired, sortIDs); diff != "" {
		t.Fatalf("agent-a ended run-2 (-want +got):\n%s", diff)
	}
	w, err := a.Wait(ctx, a1)
	if err != nil || w.State != core.StateExpired {
		t.Fatalf("wait on an expired question: %+v, %v", w, err)
	}
	// A late answer is refused honestly.
	_, err = e.as(operator).Answer(ctx, a1, client.AnswerRequest{Answer: "late"})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != 409 || !strings.Contains(ce.Message, "expired") {
		t.Fatalf("late answer: %v", err)
	}
	// Asking in an ended run is a conflict.
	_, err = a.Ask(ctx, clarification("run-2"))
	if !errors.As(err, &ce) || ce.Status != 409 {
		t.Fatalf("ask in an ended run: %v", err)
	}
}

var sortIDs = cmp.Transformer("sort", func(in []core.QuestionID) []core.QuestionID {
	out := append([]core.QuestionID(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})

func TestDrainEndsParkedWaits(t *testing.T) {
	e := newEnv(t)
	id := e.ask(agentA, "run-1")
	done := make(chan *client.WaitResponse, 1)
	go func() {
		res, err := e.as(agentA).WaitOnce(e.ctx(), id, time.Minute)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	e.parked(id)
	e.api.Drain()
	select {
	case res := <-done:
		if res == nil || res.State != core.StateOpen || res.Resume != nil {
			t.Fatalf("drained wait: %+v", res)
		}
	case <-e.ctx().Done():
		t.Fatal("Drain did not end the parked wait")
	}
	// Later waits return at once too; the question itself is untouched.
	res, err := e.as(agentA).WaitOnce(e.ctx(), id, time.Minute)
	if err != nil || res.State != core.StateOpen {
		t.Fatalf("wait after Drain: %+v, %v", res, err)
	}
}

// TestLateCallerToldThePerson: a 409 for a question a configured person
// closed names the person, not their account.
func TestLateCallerToldThePerson(t *testing.T) {
	e := newEnv(t)
	agent := e.as(agentA)
	q, err := agent.Ask(e.ctx(), client.AskRequest{Kind: core.KindClarification, RunID: "run-1", Route: "leads",
		Question: "Which region?", Reversibility: core.HardToReverse})
	if err != nil {
		t.Fatal(err)
	}
	alice := core.Decider{Surface: core.SurfaceSlack, ID: "U-alice", Name: "al1ce"}
	if _, err := e.svc.Answer(e.ctx(), core.AnswerInput{QuestionID: q.ID, Decider: alice, Text: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	_, err = agent.Cancel(e.ctx(), q.ID, "too slow")
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != 409 ||
		!strings.Contains(ce.Message, "already closed by person alice on slack at") || strings.Contains(ce.Message, "U-alice") {
		t.Fatalf("a late cancel was told %v", err)
	}
}

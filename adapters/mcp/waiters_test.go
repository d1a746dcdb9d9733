package mcp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// seenWaits tells of each wait that parks (d above 0) as it starts.
type seenWaits struct {
	mcp.Backend
	started chan core.QuestionID
}

func (s seenWaits) Wait(ctx context.Context, id core.QuestionID, d time.Duration) (mcp.Status, error) {
	if d > 0 {
		s.started <- id
	}
	return s.Backend.Wait(ctx, id, d)
}

// TestWaitsOnOneQuestionAreBounded: past 256 calls waiting on one
// question (the HTTP API's bound on its waits, by default), or
// Options.MaxWaitsPerQuestion, the next call
// waits not at all: get_answer, and an asking call sent again, end at once
// with the parked result naming the question, for get_answer later, and
// park nothing more; another question still parks its calls, and the
// close answers every call waiting. Before, nothing bounded them: a host
// that called get_answer again without ending the last call, or many
// sessions on one question, held a goroutine and a connection for each
// for as long as a person took.
func TestWaitsOnOneQuestionAreBounded(t *testing.T) {
	t.Run("default", func(t *testing.T) { boundedWaits(t, 0, 256) })
	t.Run("set", func(t *testing.T) { boundedWaits(t, 2, 2) })
}

// boundedWaits fills one question's waiters with Options.MaxWaitsPerQuestion
// set, and checks that most is the bound.
func boundedWaits(t *testing.T, set, most int) {
	started := make(chan core.QuestionID, 2*most)
	e := newEnvWith(t, mcp.Options{WaitSlice: time.Hour, MaxWaitsPerQuestion: set}, nil, func(b mcp.ServiceBackend) mcp.Backend {
		return seenWaits{Backend: b, started: started}
	})
	parks := func(what string) core.QuestionID {
		t.Helper()
		select {
		case id := <-started:
			return id
		case <-e.ctx.Done():
			t.Fatalf("%s did not wait", what)
			return ""
		}
	}
	ask := &mcpsdk.CallToolParams{Name: mcp.ToolClarification, Arguments: map[string]any{
		"question": "Which region?", "reversibility": "reversible", "tool_call_id": "toolu_1"}}
	waiting := []<-chan callResult{e.call(e.ctx, ask)}
	q := e.parked()
	parks("the asking call")
	getAnswer := &mcpsdk.CallToolParams{Name: mcp.ToolGetAnswer, Arguments: map[string]any{"question_id": string(q.ID), "wait_seconds": 300}}
	for range most - 1 {
		waiting = append(waiting, e.call(e.ctx, getAnswer))
	}
	for range most - 1 {
		if id := parks("a get_answer"); id != q.ID {
			t.Fatalf("a wait on %s, want %s", id, q.ID)
		}
	}

	for _, c := range []struct {
		name   string
		params *mcpsdk.CallToolParams
	}{{"get_answer", getAnswer}, {"the asking call sent again", ask}} {
		ch := e.call(e.ctx, c.params)
		var r callResult
		select {
		case r = <-ch:
		case <-started:
			t.Fatalf("%s past the bound waits too", c.name)
		case <-e.ctx.Done():
			t.Fatalf("%s past the bound never returned", c.name)
		}
		if r.err != nil {
			t.Fatalf("%s past the bound: %v", c.name, r.err)
		}
		got := text(t, r.res)
		if !r.res.IsError || !strings.Contains(got, "Question "+string(q.ID)+" is still parked") || !strings.Contains(got, fmt.Sprintf("calls already waiting on it on this server: %d,", most)) ||
			!strings.Contains(got, mcp.ToolGetAnswer) {
			t.Fatalf("%s past the bound got %q (error %v), want the parked result naming its question and the bound", c.name, got, r.res.IsError)
		}
		if st := structured(t, r.res); st.QuestionID != q.ID || st.State != core.StateOpen {
			t.Fatalf("%s past the bound: structured %+v", c.name, st)
		}
	}
	if qs, _, err := e.svc.ListOpen(e.ctx, "", 10); err != nil || len(qs) != 1 {
		t.Fatalf("open questions after the refusals: %d, %v; want the one", len(qs), err)
	}

	// The bound is the question's: another question parks its call.
	e.call(e.ctx, &mcpsdk.CallToolParams{Name: mcp.ToolClarification, Arguments: map[string]any{
		"question": "Which zone?", "reversibility": "reversible", "tool_call_id": "toolu_2"}})
	if id := parks("a call on another question"); id == q.ID {
		t.Fatal("the call on another question waited on the first")
	}

	// The close answers every call waiting.
	e.answer(core.AnswerInput{QuestionID: q.ID, Text: "eu-west-1"})
	for _, ch := range waiting {
		resumed(t, result(t, e.ctx, ch), q.ID, fence.VerbAnswered)
	}
}

package mcp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// progressRecorder records progress notifications as they arrive.
func progressRecorder() (*mcpsdk.ClientOptions, <-chan *mcpsdk.ProgressNotificationParams) {
	ch := make(chan *mcpsdk.ProgressNotificationParams, 1000)
	return &mcpsdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcpsdk.ProgressNotificationClientRequest) {
		select {
		case ch <- req.Params:
		default:
		}
	}}, ch
}

// awaitProgress returns the first notification that reports a finished
// wait slice (progress >= 1): proof that the server spoke while waiting.
func awaitProgress(t *testing.T, ctx context.Context, ch <-chan *mcpsdk.ProgressNotificationParams, token string, id core.QuestionID) {
	t.Helper()
	for {
		select {
		case p := <-ch:
			if p.ProgressToken != token || !strings.Contains(p.Message, string(id)) {
				t.Fatalf("progress notification %+v is not for token %s and question %s", p, token, id)
			}
			if p.Progress >= 1 {
				return
			}
		case <-ctx.Done():
			t.Fatal("no progress notification arrived while waiting")
		}
	}
}

func TestProgressWhileWaiting(t *testing.T) {
	copts, progress := progressRecorder()
	e := newEnv(t, mcp.Options{WaitSlice: 20 * time.Millisecond}, copts)
	params := &mcpsdk.CallToolParams{Name: mcp.ToolClarification, Arguments: map[string]any{
		"question": "Ship it on Friday?", "reversibility": "hard_to_reverse",
	}}
	params.SetProgressToken("tok-1")
	ch := e.call(e.ctx, params)
	q := e.parked()
	awaitProgress(t, e.ctx, progress, "tok-1", q.ID)
	select {
	case r := <-ch:
		t.Fatalf("the call returned before the answer: %+v", r)
	default:
	}
	e.answer(core.AnswerInput{QuestionID: q.ID, Text: "no, Monday"})
	resumed(t, result(t, e.ctx, ch), q.ID, fence.VerbAnswered)
}

func TestMissingReversibility(t *testing.T) {
	e := newEnv(t, mcp.Options{}, nil)
	for _, args := range []map[string]any{
		{"question": "Which colour?"},
		{"question": "Which colour?", "reversibility": "maybe"},
	} {
		res, err := e.cs.CallTool(e.ctx, &mcpsdk.CallToolParams{Name: mcp.ToolClarification, Arguments: args})
		if err != nil {
			t.Fatalf("protocol error instead of a tool error: %v", err)
		}
		if !res.IsError || !strings.Contains(text(t, res), "reversibility") {
			t.Errorf("%v: result is error=%v %q, want a tool error naming reversibility", args, res.IsError, text(t, res))
		}
	}
	qs, _, err := e.svc.ListOpen(e.ctx, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 0 {
		t.Errorf("%d questions were parked", len(qs))
	}
}

func TestCoreValidationIsAToolError(t *testing.T) {
	e := newEnv(t, mcp.Options{}, nil)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{mcp.ToolDecision, map[string]any{"question": "Which?", "reversibility": "reversible", "options": []map[string]any{
			{"title": "A", "writeup": "a", "recommended": true}, {"title": "B", "writeup": "b", "recommended": true},
		}}, "exactly one recommended option"},
		{mcp.ToolQuestions, map[string]any{"reversibility": "reversible", "questions": []map[string]any{
			{"question": "Which?", "options": []map[string]any{{"label": "A"}, {"label": " "}}},
		}}, "questions[0].options[1].label is required"},
		{mcp.ToolClarification, map[string]any{"question": "Which?", "reversibility": "reversible", "project": strings.Repeat("p", 200)}, "project is 200 characters"},
		{mcp.ToolClarification, map[string]any{"question": "Which?", "reversibility": "reversible", "timeout": "soon"}, `timeout "soon" is not a duration: write a positive number with s, m, h or d, such as 90s, 30m, 2h or 1d`},
		{mcp.ToolApproval, map[string]any{"tool": "rm", "arguments": map[string]any{}, "reversibility": "hard_to_reverse", "timeout": "-1h"}, `timeout "-1h" is not a duration`},
	} {
		res, err := e.cs.CallTool(e.ctx, &mcpsdk.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s: protocol error instead of a tool error: %v", c.tool, err)
		}
		if got := text(t, res); !res.IsError || !strings.Contains(got, c.want) {
			t.Errorf("%s: result is error=%v %q, want a tool error with %q", c.tool, res.IsError, got, c.want)
		}
	}
	if qs, _, _ := e.svc.ListOpen(e.ctx, "", 10); len(qs) != 0 {
		t.Errorf("%d questions were parked", len(qs))
	}
}

func TestCancelledCallLeavesQuestionParked(t *testing.T) {
	e := newEnv(t, mcp.Options{}, nil)
	ctx, cancel := context.WithCancel(e.ctx)
	ch := e.call(ctx, &mcpsdk.CallToolParams{Name: mcp.ToolClarification, Arguments: map[string]any{
		"question": "Rename the repo?", "reversibility": "hard_to_reverse",
	}})
	q := e.parked()
	cancel()
	select {
	case r := <-ch:
		if r.err == nil {
			t.Fatalf("cancelled call returned %+v", r.res)
		}
	case <-e.ctx.Done():
		t.Fatal("the cancelled call never returned")
	}
	got, err := e.svc.Get(e.ctx, q.ID)
	if err != nil || !got.Open() {
		t.Fatalf("after the cancelled call the question is %v, %v; want it still open", got, err)
	}
}

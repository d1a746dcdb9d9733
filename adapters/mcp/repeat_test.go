package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
)

// toolResultOf reads a tools/call result that must be a tool's own
// result, not a task.
func toolResultOf(t *testing.T, raw json.RawMessage) *mcpsdk.CallToolResult {
	t.Helper()
	var probe struct {
		ResultType string `json:"resultType"`
	}
	var res mcpsdk.CallToolResult
	if err := json.Unmarshal(raw, &probe); err != nil || probe.ResultType == "task" || probe.ResultType == "input_required" {
		t.Fatalf("tools/call returned %s, want a tool result (%v)", raw, err)
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("tools/call result %s: %v", raw, err)
	}
	return &res
}

// TestReusedToolCallIDAfterTheWindow: over /mcp without sessions, a call
// that names no run is filed under its agent's run, which never ends, so
// a tool_call_id a model made up ("deploy-1") comes back days later on a
// new request. Within minutes of the first question's close it is the
// same call sent again (its reply lost) and gets that outcome; days
// later it is a tool error naming the id and asking for a new one, and
// nothing is parked or decided. A task host and a blocking host alike;
// a named run, and a question still open, keep the replay.
func TestReusedToolCallIDAfterTheWindow(t *testing.T) {
	e := newTaskEnv(t)
	tasks := e.host("tok-alice", tasksCaps(false))
	plain := e.host("tok-alice", map[string]any{})
	approval := func(callID string, extra map[string]any) map[string]any {
		args := map[string]any{"tool": "deploy", "arguments": map[string]any{"env": "prod"}, "reversibility": "hard_to_reverse", "tool_call_id": callID}
		for k, v := range extra {
			args[k] = v
		}
		return args
	}
	refused := func(raw json.RawMessage, callID string) {
		t.Helper()
		res := toolResultOf(t, raw)
		if !res.IsError || len(res.Content) == 0 {
			t.Fatalf("a reuse days later returned %s, want a tool error", raw)
		}
		msg := res.Content[0].(*mcpsdk.TextContent).Text
		if !strings.Contains(msg, `"`+callID+`"`) || !strings.Contains(msg, "new tool_call_id") || !strings.Contains(msg, "closed at") {
			t.Errorf("the tool error says %q: want the id, when the earlier question closed, and to use a new tool_call_id", msg)
		}
		if open, _, _ := e.svc.ListOpen(e.ctx, "", 10); len(open) != 0 {
			t.Errorf("a refused reuse parked %d questions", len(open))
		}
	}

	// A task host.
	first := asTask(t, must(t)(tasks.callTool(e.ctx, mcp.ToolApproval, approval("deploy-1", nil))))
	e.answer(core.AnswerInput{QuestionID: core.QuestionID(first.TaskID), OptionID: core.ApproveOption})
	e.clock.Advance(5 * time.Minute) // the reply was lost: the host sends the call again
	again := asTask(t, must(t)(tasks.callTool(e.ctx, mcp.ToolApproval, approval("deploy-1", nil))))
	if again.TaskID != first.TaskID || again.Status != "completed" {
		t.Fatalf("a retry within minutes got %s %s, want the first task %s completed", again.TaskID, again.Status, first.TaskID)
	}
	e.clock.Advance(72 * time.Hour)
	refused(must(t)(tasks.callTool(e.ctx, mcp.ToolApproval, approval("deploy-1", nil))), "deploy-1")

	// A blocking host.
	out := make(chan json.RawMessage, 1)
	go func() {
		raw, err := plain.callTool(e.ctx, mcp.ToolApproval, approval("deploy-2", map[string]any{"question": "Deploy 2?"}))
		if err != nil {
			t.Error(err)
		}
		out <- raw
	}()
	e.answer(core.AnswerInput{QuestionID: parkedWith(t, e.ctx, e.svc, "Deploy 2?").ID, OptionID: core.ApproveOption})
	if res := toolResultOf(t, <-out); res.IsError {
		t.Fatalf("the first blocking call: %+v", res)
	}
	e.clock.Advance(72 * time.Hour)
	refused(must(t)(plain.callTool(e.ctx, mcp.ToolApproval, approval("deploy-2", map[string]any{"question": "Deploy 2?"}))), "deploy-2")

	// A named run keeps the replay, however late.
	named := approval("deploy-3", map[string]any{"run_id": "release-7"})
	w := asTask(t, must(t)(tasks.callTool(e.ctx, mcp.ToolApproval, named)))
	e.answer(core.AnswerInput{QuestionID: core.QuestionID(w.TaskID), OptionID: core.DenyOption})
	e.clock.Advance(72 * time.Hour)
	if again := asTask(t, must(t)(tasks.callTool(e.ctx, mcp.ToolApproval, named))); again.TaskID != w.TaskID || again.Status != "completed" {
		t.Errorf("a named run's repeat got %s %s, want %s completed", again.TaskID, again.Status, w.TaskID)
	}

	// A question still open is the same question, however late.
	open := asTask(t, must(t)(tasks.callTool(e.ctx, mcp.ToolApproval, approval("deploy-4", nil))))
	e.clock.Advance(11 * time.Minute)
	if again := asTask(t, must(t)(tasks.callTool(e.ctx, mcp.ToolApproval, approval("deploy-4", nil)))); again.TaskID != open.TaskID || again.Status != "working" {
		t.Errorf("an open question's repeat got %s %s, want %s working", again.TaskID, again.Status, open.TaskID)
	}
}

// must fails the test on err and returns v.
func must(t *testing.T) func(json.RawMessage, error) json.RawMessage {
	return func(v json.RawMessage, err error) json.RawMessage {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

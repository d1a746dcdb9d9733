package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// TestApprovalBatch: request_approval with calls parks one batch; its
// result carries each call's outcome under its id, in the data and as
// one fenced text per call after the batch's own.
func TestApprovalBatch(t *testing.T) {
	e := newEnv(t, mcp.Options{}, nil)
	ch := e.call(e.ctx, &mcpsdk.CallToolParams{Name: mcp.ToolApproval, Arguments: map[string]any{
		"reversibility": "reversible",
		"calls": []map[string]any{
			{"tool_call_id": "toolu_a", "tool": "write_file", "arguments": json.RawMessage(`{"path":"a","n":1e3}`)},
			{"tool_call_id": "toolu_b", "tool": "write_file", "arguments": json.RawMessage(`{"path":"b"}`)},
		},
	}})
	q := e.parked()
	if !q.IsBatch() || len(q.Calls) != 2 || q.Calls[0].ToolCallID != "toolu_a" || !strings.Contains(string(q.Calls[0].Arguments), `"n":1e3`) {
		t.Fatalf("parked %+v", q.Calls)
	}
	e.answer(core.AnswerInput{QuestionID: q.ID, Calls: []core.CallDecision{{ToolCallID: "toolu_b", OptionID: core.DenyOption}}})
	e.answer(core.AnswerInput{QuestionID: q.ID, OptionID: core.ApproveOption})

	res := result(t, e.ctx, ch)
	if res.IsError {
		t.Fatalf("tool error: %+v", res.Content)
	}
	if p, err := fence.ParseResume(res.Content[0].(*mcpsdk.TextContent).Text); err != nil || p.QuestionID != string(q.ID) || p.Verb != fence.VerbAnswered {
		t.Fatalf("the batch's text: %+v, %v", p, err)
	}
	st := structured(t, res)
	if len(st.Calls) != 2 || st.Calls[0].ToolCallID != "toolu_a" || !*st.Calls[0].Approved || *st.Calls[1].Approved {
		t.Fatalf("calls in the data: %+v", st.Calls)
	}
	if len(res.Content) != 3 {
		t.Fatalf("%d content blocks, want the batch's and one per call", len(res.Content))
	}
	for i, id := range []string{"toolu_a", "toolu_b"} {
		p, err := fence.ParseResume(res.Content[i+1].(*mcpsdk.TextContent).Text)
		if err != nil || len(p.Regions) == 0 {
			t.Fatalf("call %s's text: %v", id, err)
		}
		found := false
		for _, r := range p.Regions {
			found = found || r.Tag == fence.TagToolCallID && r.Content == id
		}
		if !found {
			t.Fatalf("call %d's text is not bound to %s", i, id)
		}
	}
}

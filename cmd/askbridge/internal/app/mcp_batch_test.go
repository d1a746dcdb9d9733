package app_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// TestMCPBatchOnEveryTransport: request_approval with calls parks one
// batch with every call, answered per call, on every transport. Before,
// the stdio process sent the server an approval with neither a tool nor
// its calls, which was refused, so a batch never worked over stdio.
func TestMCPBatchOnEveryTransport(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			b := apptest.StartBridge(t)
			cs := tr.connect(t, ctx, b, nil)
			ch := callTool(ctx, cs, "request_approval", map[string]any{
				"question": "Write both files?", "reversibility": "reversible", "calls": []map[string]any{
					{"tool_call_id": "c1", "tool": "write_file", "arguments": map[string]any{"path": "/tmp/a"}},
					{"tool_call_id": "c2", "tool": "write_file", "arguments": map[string]any{"path": "/tmp/b"}},
				}})
			q := parkedAs(t, ctx, b.Ops, "Write both files?")
			if len(q.Calls) != 2 || q.Calls[1].ToolCallID != "c2" {
				t.Fatalf("the batch was parked with calls %+v", q.Calls)
			}
			if _, err := b.Ops.Answer(ctx, q.ID, client.AnswerRequest{Calls: []core.CallDecision{
				{ToolCallID: "c1", OptionID: core.ApproveOption}, {ToolCallID: "c2", OptionID: core.DenyOption},
			}}); err != nil {
				t.Fatal(err)
			}
			var r toolCall
			select {
			case r = <-ch:
			case <-ctx.Done():
				t.Fatal("the tool call never returned")
			}
			if r.err != nil || r.res.IsError {
				t.Fatalf("tool call: %+v, %v", r.res, r.err)
			}
			raw, _ := json.Marshal(r.res.StructuredContent)
			var st struct {
				Calls []struct {
					ToolCallID string `json:"tool_call_id"`
					Approved   bool   `json:"approved"`
				} `json:"calls"`
			}
			if err := json.Unmarshal(raw, &st); err != nil || len(st.Calls) != 2 || !st.Calls[0].Approved || st.Calls[1].Approved {
				t.Errorf("structured content %s, want c1 approved and c2 denied", raw)
			}
		})
	}
}

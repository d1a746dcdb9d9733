package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// formsMeta is tasksMeta from a host that also takes form elicitations
// (the host door).
var formsMeta = map[string]any{
	"io.modelcontextprotocol/protocolVersion": "2026-07-28",
	"io.modelcontextprotocol/clientInfo":      map[string]any{"name": "task-host", "version": "1"},
	"io.modelcontextprotocol/clientCapabilities": map[string]any{
		"extensions":  map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}},
		"elicitation": map[string]any{"form": map[string]any{}},
	},
}

// formsRPC is h.rpc from a host that takes forms.
func (h *stdioHost) formsRPC(id int, method string, params map[string]any) (json.RawMessage, error) {
	h.t.Helper()
	params["_meta"] = formsMeta
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := h.stdin.Write(append(b, '\n')); err != nil {
		h.t.Fatal(err)
	}
	for h.lines.Scan() {
		if res, err := rpcResponse(id, [][]byte{h.lines.Bytes()}); err == nil || !strings.HasPrefix(err.Error(), "no response") {
			return res, err
		}
	}
	return nil, fmt.Errorf("%s: no response over stdio; stderr: %s", method, h.stderr.String())
}

// TestMCPStdioDeclineKeptByTheServer: the whole program: `askbridge mcp`
// keeps its host's decline of a task's form on the server, so the task
// is working again, for a process the host starts anew too, and the
// question stays open for chat. Before, the form was asked again at
// every poll.
func TestMCPStdioDeclineKeptByTheServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	b := apptest.StartBridge(t)
	env := map[string]string{"ASKBRIDGE_URL": b.Main.URL, "ASKBRIDGE_TOKEN": apptest.AgentA}
	var task struct {
		TaskID        string                     `json:"taskId"`
		Status        string                     `json:"status"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
	}
	read := func(raw json.RawMessage, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		task.InputRequests = nil
		if err := json.Unmarshal(raw, &task); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
	}
	first := startStdioHost(t, ctx, env)
	read(first.formsRPC(1, "tools/call", map[string]any{"name": "request_clarification",
		"arguments": map[string]any{"question": "Which queue?", "reversibility": "reversible"}}))
	if task.Status != "input_required" || len(task.InputRequests) != 1 {
		t.Fatalf("created %s with %d requests, want input_required with the host's form", task.Status, len(task.InputRequests))
	}
	var key string
	for k := range task.InputRequests {
		key = k
	}
	if _, err := first.formsRPC(2, "tasks/update", map[string]any{"taskId": task.TaskID,
		"inputResponses": map[string]any{key: map[string]any{"action": "decline"}}}); err != nil {
		t.Fatal(err)
	}
	read(first.formsRPC(3, "tasks/get", map[string]any{"taskId": task.TaskID}))
	if task.Status != "working" || len(task.InputRequests) != 0 {
		t.Fatalf("after the host declined: %s with %d requests, want working with none", task.Status, len(task.InputRequests))
	}
	first.stop()
	second := startStdioHost(t, ctx, env)
	defer second.stop()
	read(second.formsRPC(1, "tasks/get", map[string]any{"taskId": task.TaskID}))
	if task.Status != "working" || len(task.InputRequests) != 0 {
		t.Fatalf("from a process started anew: %s with %d requests, want working with none", task.Status, len(task.InputRequests))
	}
	if q, err := b.Ops.Get(ctx, core.QuestionID(task.TaskID)); err != nil || q.State != core.StateOpen {
		t.Fatalf("after the host declined the question is %+v, %v; want it open", q, err)
	}
}

package mcp_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
)

// TestTaskMethodNameHeader: over streamable HTTP a task method carries
// its task's id in Mcp-Name, and the transport has a server that reads
// the body refuse a request whose header is missing or names something
// else (HTTP 400, -32020), since an intermediary routes or checks on the
// header while the server acts on the body. Before, the header went
// unread: a tasks/cancel whose Mcp-Name named one task withdrew
// another. The base64 form of the header is read as the id it encodes.
func TestTaskMethodNameHeader(t *testing.T) {
	e := newTaskEnv(t)
	alice := e.host("tok-alice", tasksCaps(false))
	ask := func(text string) string {
		return alice.task(e.ctx, mcp.ToolClarification, map[string]any{"question": text, "reversibility": "reversible"}).TaskID
	}
	target, decoy := ask("Target?"), ask("Decoy?")
	for _, c := range []struct {
		method, name string
		params       map[string]any
	}{
		{"tasks/cancel", decoy, map[string]any{"taskId": target}},
		{"tasks/cancel", "", map[string]any{"taskId": target}},
		{"tasks/get", decoy, map[string]any{"taskId": target}},
		{"tasks/update", decoy, map[string]any{"taskId": target, "inputResponses": map[string]any{}}},
		{"tasks/get", "=?base64?" + base64.StdEncoding.EncodeToString([]byte(decoy)) + "?=", map[string]any{"taskId": target}},
		{"tasks/get", "=?base64?not base64?=", map[string]any{"taskId": target}},
	} {
		res, _, err := alice.post(e.ctx, c.method, c.name, c.params)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var m struct{ Error json.RawMessage }
		var rerr rpcError
		if res.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &m) != nil || m.Error == nil ||
			json.Unmarshal(m.Error, &rerr) != nil || rerr.Code != -32020 {
			t.Errorf("%s with Mcp-Name %q for task %s: HTTP %d %s, want 400 and -32020", c.method, c.name, target, res.StatusCode, body)
			continue
		}
		e.schema.validate("error", m.Error)
	}
	for _, id := range []string{target, decoy} {
		if q, err := e.svc.Get(e.ctx, core.QuestionID(id)); err != nil || !q.Open() {
			t.Errorf("question %s after the refused requests: %+v, %v", id, q, err)
		}
	}
	// The header as the extension has it, plain or base64, is served.
	if w, err := alice.get(e.ctx, target); err != nil || w.TaskID != target {
		t.Errorf("tasks/get with Mcp-Name the task's id: %+v, %v", w, err)
	}
	raw, err := alice.send(e.ctx, "tasks/get", "=?base64?"+base64.StdEncoding.EncodeToString([]byte(target))+"?=", map[string]any{"taskId": target})
	if err != nil || asTaskID(raw) != target {
		t.Errorf("tasks/get with Mcp-Name the task's id in base64: %s, %v", raw, err)
	}
}

func asTaskID(raw json.RawMessage) string {
	var w wireTask
	_ = json.Unmarshal(raw, &w)
	return w.TaskID
}

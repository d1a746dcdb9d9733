package app_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// taskTTL reads a task's status and ttlMs (null reads as nil).
type taskTTL struct {
	TaskID string `json:"taskId"`
	Status string `json:"status"`
	TTLMs  *int64 `json:"ttlMs"`
}

// TestMCPTaskTTLOverStdio: a task made by `askbridge mcp` says how long
// it can be read, as one made over /mcp does: from its asking to its
// deadline plus the bridge's retention while it is open (created and
// polled alike), then to its close plus the retention. Before, the stdio
// process did not know the retention and said null ("unlimited"), which
// was untrue: the bridge purges a closed question after its retention.
func TestMCPTaskTTLOverStdio(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	const retention = 36 * time.Hour // not the default: the server's own
	m := apptest.Start(t, app.Settings{File: app.File{Policies: app.Policies{Retention: app.Duration(retention)}}})
	host := startStdioHost(t, ctx, map[string]string{"ASKBRIDGE_URL": m.URL, "ASKBRIDGE_TOKEN": apptest.AgentA})
	defer host.stop()
	read := func(raw json.RawMessage, err error) taskTTL {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var w taskTTL
		if err := json.Unmarshal(raw, &w); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return w
	}
	ms := func(end, from time.Time) int64 { return end.Add(retention).Sub(from).Milliseconds() }

	created := read(host.rpc(1, "tools/call", map[string]any{"name": "request_clarification", "arguments": map[string]any{
		"question": "Which region?", "reversibility": "reversible", "timeout": "2h"}}))
	ops := client.New(m.URL, apptest.OpTok)
	q, err := ops.Get(ctx, core.QuestionID(created.TaskID))
	if err != nil {
		t.Fatal(err)
	}
	open := ms(q.Deadline, q.CreatedAt)
	if created.Status != "working" || created.TTLMs == nil || *created.TTLMs != open {
		t.Fatalf("created task %+v (ttlMs %v), want working with ttlMs %d", created, deref(created.TTLMs), open)
	}
	if w := read(host.rpc(2, "tasks/get", map[string]any{"taskId": created.TaskID})); w.TTLMs == nil || *w.TTLMs != open {
		t.Fatalf("polled open task: ttlMs %v, want %d", deref(w.TTLMs), open)
	}

	if _, err := ops.Answer(ctx, q.ID, client.AnswerRequest{Answer: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	if q, err = ops.Get(ctx, q.ID); err != nil || q.Resolution == nil {
		t.Fatalf("answered question %+v, %v", q, err)
	}
	closed := ms(q.Resolution.At, q.CreatedAt)
	if w := read(host.rpc(3, "tasks/get", map[string]any{"taskId": created.TaskID})); w.Status != "completed" || w.TTLMs == nil || *w.TTLMs != closed {
		t.Fatalf("completed task %+v (ttlMs %v), want ttlMs %d: the retention from its close", w, deref(w.TTLMs), closed)
	}
}

// deref shows a ttlMs for a failure message: "null" for none.
func deref(p *int64) any {
	if p == nil {
		return "null"
	}
	return *p
}

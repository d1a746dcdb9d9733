package mcp_test

import (
	"bufio"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
)

// TestTaskListenKeepsItsStreamAlive: a subscriptions/listen stream whose
// task stays open writes an SSE comment every wait slice, which no client
// reads as a message but which keeps a proxy from cutting the idle stream
// (nginx and ALBs cut one after 60 s); then, the task ended, its
// notification and the closing response. Before, nothing crossed the
// stream between the acknowledgement and the task's end.
func TestTaskListenKeepsItsStreamAlive(t *testing.T) {
	e := newTaskEnvWith(t, func(o *mcp.Options) { o.WaitSlice = 20 * time.Millisecond })
	alice := e.host("tok-alice", tasksCaps(false))
	raw, err := alice.callTool(e.ctx, mcp.ToolClarification, map[string]any{"question": "Which?", "reversibility": "reversible"})
	if err != nil {
		t.Fatal(err)
	}
	id := asTask(t, raw).TaskID
	res, _, err := alice.post(e.ctx, "subscriptions/listen", "", map[string]any{"notifications": map[string]any{"taskIds": []string{id}}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func(want string) {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the stream ended before %q", want)
				}
				if strings.HasPrefix(l, want) {
					return
				}
			case <-e.ctx.Done():
				t.Fatalf("no %q on the stream", want)
			}
		}
	}
	next(`data: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged"`)
	next(": askbridge is waiting")
	next(": askbridge is waiting") // and again, while it stays open
	e.answer(core.AnswerInput{QuestionID: core.QuestionID(id), Text: "eu"})
	next(`data: {"jsonrpc":"2.0","method":"notifications/tasks"`)
	next(`data: {"id":`)
}

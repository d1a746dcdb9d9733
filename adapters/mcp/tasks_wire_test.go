package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// TestTaskNotifications: a host listening for its tasks (on any replica)
// hears the acknowledgement with the ids agreed (its own tasks only),
// then one notifications/tasks per task as its question closes, the task
// as tasks/get would return it, and the stream ends gracefully once every
// task it named has ended. A host that did not declare the extension is
// refused with -32021.
func TestTaskNotifications(t *testing.T) {
	e := newTaskEnv(t)
	alice := e.host("tok-alice", tasksCaps(false))
	ask := func(text string) string {
		t.Helper()
		raw, err := alice.callTool(e.ctx, mcp.ToolClarification, map[string]any{"question": text, "reversibility": "reversible"})
		if err != nil {
			t.Fatal(err)
		}
		return asTask(t, raw).TaskID
	}
	answered, cancelled := ask("One?"), ask("Two?")
	mallorys, err := e.svc.Ask(e.ctx, core.AskInput{Agent: "mallory", RunID: "r", Kind: core.KindClarification, Text: "Theirs?", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := alice.listen(e.ctx, answered, cancelled, string(mallorys.ID), "no-such-task")
	if err != nil {
		t.Fatal(err)
	}
	notif := tasksSchema(t, "TaskStatusNotification")
	next := func() (method string, params map[string]any, raw json.RawMessage) {
		t.Helper()
		select {
		case raw, ok := <-stream:
			if !ok {
				t.Fatal("the stream ended early")
			}
			var m struct {
				Method string         `json:"method"`
				Params map[string]any `json:"params"`
				Result map[string]any `json:"result"`
			}
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatalf("%s: %v", raw, err)
			}
			if m.Result != nil {
				return "", m.Result, raw
			}
			return m.Method, m.Params, raw
		case <-e.ctx.Done():
			t.Fatal("nothing came on the stream")
		}
		return "", nil, nil
	}
	subOf := func(p map[string]any) any {
		m, _ := p["_meta"].(map[string]any)
		return m["io.modelcontextprotocol/subscriptionId"]
	}

	method, p, _ := next()
	ids, _ := p["notifications"].(map[string]any)["taskIds"].([]any)
	if method != "notifications/subscriptions/acknowledged" || len(ids) != 2 || ids[0] != answered || ids[1] != cancelled || subOf(p) == nil {
		t.Fatalf("first message: %s %v", method, p)
	}
	sub := subOf(p)

	e.answer(core.AnswerInput{QuestionID: core.QuestionID(answered), Text: "yes"})
	seen := map[string]map[string]any{}
	method, p, raw := next()
	if method != "notifications/tasks" || subOf(p) != sub {
		t.Fatalf("after an answer: %s %v", method, p)
	}
	doc, _ := jsonschemaDoc(raw)
	if err := notif.Validate(doc); err != nil {
		t.Errorf("the notification fails the pinned schema: %v\n%s", err, raw)
	}
	seen[p["taskId"].(string)] = p
	if err := alice.cancel(e.ctx, cancelled); err != nil {
		t.Fatal(err)
	}
	method, p, _ = next()
	if method != "notifications/tasks" {
		t.Fatalf("after a cancel: %s %v", method, p)
	}
	seen[p["taskId"].(string)] = p
	if seen[answered]["status"] != "completed" || seen[answered]["result"] == nil || seen[cancelled]["status"] != "cancelled" {
		t.Fatalf("notifications: %v", seen)
	}
	if got, err := alice.get(e.ctx, answered); err != nil || got.Status != "completed" {
		t.Errorf("tasks/get after the notification: %+v, %v", got, err)
	}
	if _, end, _ := next(); end["resultType"] != "complete" || subOf(end) != sub {
		t.Errorf("the stream's end: %v", end)
	}
	if _, ok := <-stream; ok {
		t.Error("the stream went on after its response")
	}

	plain := e.host("tok-alice", map[string]any{})
	refused, err := plain.listen(e.ctx, answered)
	if err != nil {
		t.Fatal(err)
	}
	var r struct{ Error *rpcError }
	if err := json.Unmarshal(<-refused, &r); err != nil || r.Error == nil || r.Error.Code != -32021 {
		t.Errorf("a listen without the extension: %+v (%v)", r.Error, err)
	}
}

// TestNoTaskForSessions: a 2025-11-25 client gets no task even if its
// capabilities name the extension (tasks are a 2026-07-28 shape): its
// call blocks and returns the resume.
func TestNoTaskForSessions(t *testing.T) {
	e := newTaskEnv(t)
	copts := &mcpsdk.ClientOptions{Capabilities: &mcpsdk.ClientCapabilities{Extensions: map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}
	cs := (&balancer{r: &replicas{urls: e.r.urls[:1]}, token: "tok-alice"}).connect(t, e.ctx, copts, legacy)
	out := callOn(e.ctx, cs, &mcpsdk.CallToolParams{Name: mcp.ToolClarification, Arguments: map[string]any{"question": "Old?", "reversibility": "reversible"}})
	q := parkedWith(t, e.ctx, e.svc, "Old?")
	e.answer(core.AnswerInput{QuestionID: q.ID, Text: "yes"})
	resumed(t, result(t, e.ctx, out), q.ID, fence.VerbAnswered)
}

// TestUnsupportedProtocolVersion: a request of a revision askbridge does
// not serve is refused with -32022, listing the revisions it does.
func TestUnsupportedProtocolVersion(t *testing.T) {
	e := newTaskEnv(t)
	h := e.host("tok-alice", tasksCaps(false))
	h.version = "2099-01-01"
	_, err := h.callTool(e.ctx, mcp.ToolClarification, map[string]any{"question": "Future?", "reversibility": "reversible"})
	var rerr *rpcError
	if !errors.As(err, &rerr) || rerr.Code != -32022 || !strings.Contains(string(rerr.Data), "2026-07-28") {
		t.Fatalf("a request of 2099-01-01: %v (%s)", err, dataOf(rerr))
	}
	if qs, _, _ := e.svc.ListOpen(e.ctx, "", 10); len(qs) != 0 {
		t.Errorf("the refused request parked %d questions", len(qs))
	}
}

func dataOf(e *rpcError) string {
	if e == nil {
		return ""
	}
	return string(e.Data)
}

// TestTaskListenRefusesRebinding: the listen that askbridge serves itself
// refuses, as the SDK's handler does, a request that reached a loopback
// address under another name (a page's DNS rebinding).
func TestTaskListenRefusesRebinding(t *testing.T) {
	e := newTaskEnv(t)
	h := e.host("tok-alice", tasksCaps(false))
	h.http = &http.Client{Transport: rehost{e.r.urls[0].Host}}
	res, _, err := h.post(e.ctx, "subscriptions/listen", "", map[string]any{"notifications": map[string]any{"taskIds": []string{"x"}}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("a rebound listen: HTTP %d, want 403", res.StatusCode)
	}
}

// rehost sends a request to addr under the Host evil.example.
type rehost struct{ addr string }

func (r rehost) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Host, req.Host = r.addr, "evil.example"
	req.Header.Set("Authorization", "Bearer tok-alice")
	return http.DefaultTransport.RoundTrip(req)
}

// TestTaskListenLooksAtTheFirstIDsOnly: a listen looks at the first 100
// distinct ids it names and no more, so a request naming thousands of
// unknown ids costs at most 100 reads. The host's own task, named after
// 100 others, is left out of the ack (before, every id named was read
// until 100 were agreed); named among them, once or many times, it is
// agreed once.
func TestTaskListenLooksAtTheFirstIDsOnly(t *testing.T) {
	e := newTaskEnv(t)
	alice := e.host("tok-alice", tasksCaps(false))
	own := alice.task(e.ctx, mcp.ToolClarification, map[string]any{"question": "Mine?", "reversibility": "reversible"}).TaskID
	others := make([]string, 100)
	for i := range others {
		others[i] = fmt.Sprintf("no-such-task-%03d", i)
	}
	acked := func(ids ...string) []any {
		t.Helper()
		ctx, hangUp := context.WithCancel(e.ctx) // the stream is not followed past its ack
		defer hangUp()
		stream, err := alice.listen(ctx, ids...)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Method string         `json:"method"`
			Params map[string]any `json:"params"`
		}
		if err := json.Unmarshal(<-stream, &m); err != nil || m.Method != "notifications/subscriptions/acknowledged" {
			t.Fatalf("first message: %+v, %v", m, err)
		}
		got, _ := m.Params["notifications"].(map[string]any)["taskIds"].([]any)
		return got
	}
	if got := acked(append(others, own)...); len(got) != 0 {
		t.Errorf("the 101st id was looked at: agreed %v", got)
	}
	if got := acked(append([]string{own, own, own}, others[:99]...)...); len(got) != 1 || got[0] != own {
		t.Errorf("the own task among the first 100, named three times: agreed %v", got)
	}
}

// TestTaskListenAgreesToNone: a listen whose ids are none of the host's
// (another agent's task, an unknown id, a task purged since) is
// acknowledged with an empty list of task ids, which the pinned schema
// takes (it was null, which a host checking the acknowledgement refuses),
// and then ends gracefully: there is nothing to follow.
func TestTaskListenAgreesToNone(t *testing.T) {
	e := newTaskEnv(t)
	alice := e.host("tok-alice", tasksCaps(false))
	mallorys, err := e.svc.Ask(e.ctx, core.AskInput{Agent: "mallory", RunID: "r", Kind: core.KindClarification, Text: "Theirs?", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := alice.listen(e.ctx, string(mallorys.ID), "no-such-task")
	if err != nil {
		t.Fatal(err)
	}
	var ack struct {
		Method string `json:"method"`
		Params struct {
			Notifications json.RawMessage `json:"notifications"`
		} `json:"params"`
	}
	if raw := <-stream; json.Unmarshal(raw, &ack) != nil || ack.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first message: %s", raw)
	}
	doc, err := jsonschemaDoc(ack.Params.Notifications)
	if err != nil {
		t.Fatal(err)
	}
	if err := tasksSchema(t, "TaskSubscriptionAcknowledgedNotifications").Validate(doc); err != nil {
		t.Errorf("the acknowledgement's notifications fail the pinned schema: %v\n%s", err, ack.Params.Notifications)
	}
	var end struct {
		Result map[string]any `json:"result"`
	}
	if raw, ok := <-stream; !ok || json.Unmarshal(raw, &end) != nil || end.Result["resultType"] != "complete" {
		t.Errorf("after an acknowledgement of no tasks: %s (open %v), want the listen's response", raw, ok)
	}
	if raw, ok := <-stream; ok {
		t.Errorf("the stream went on after its response: %s", raw)
	}
}

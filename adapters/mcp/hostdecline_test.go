package mcp_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestTaskHostDeclineAsksTheFormNoMore: a host that declines a task's
// form has answered that request, which the Tasks extension never asks
// again under its key: the task goes back to working, on every replica,
// the question waits for chat, and a later reply under that key changes
// nothing. A form that chat's answers change is a new request, asked
// again. Before, the declined request stayed outstanding for good, and a
// host that shows a key once showed the task waiting on nothing.
func TestTaskHostDeclineAsksTheFormNoMore(t *testing.T) {
	e := newTaskEnv(t)
	h := e.host("tok-alice", tasksCaps(true))
	w := h.task(e.ctx, mcp.ToolDecision, queueArgs)
	if w.Status != "input_required" {
		t.Fatalf("created %+v, want input_required", w)
	}
	key := onlyRequest(t, w.InputRequests).key
	if err := h.update(e.ctx, w.TaskID, map[string]any{key: map[string]any{"action": "decline"}}); err != nil {
		t.Fatal(err)
	}
	for range 3 { // the replicas in turn
		got, err := h.get(e.ctx, w.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != "working" || len(got.InputRequests) != 0 {
			t.Fatalf("after the host declined: %s with %d requests, want working with none", got.Status, len(got.InputRequests))
		}
	}
	q, _ := e.svc.Get(e.ctx, core.QuestionID(w.TaskID))
	if !q.Open() {
		t.Fatalf("a declined form closed the question: %s", q.State)
	}
	// A later accept under the declined key is acknowledged and ignored.
	if err := h.update(e.ctx, w.TaskID, map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"option": "sqs"}}}); err != nil {
		t.Fatal(err)
	}
	if q, _ := e.svc.Get(e.ctx, q.ID); !q.Open() {
		t.Fatalf("a reply to a declined form was recorded: %s %+v", q.State, q.Resolution)
	}
}

// TestHostDeclineKeptWhileTheQuestionMayBeOpen: a host's decline of a
// form is kept for as long as its question can still be open, re-asks
// that move its deadline on included. Before, it was kept until a day
// after the deadline at the decline: a question asked with two days and
// re-asked once was still open when the decline lapsed, and its host
// was shown the form it had declined again, under the same key.
func TestHostDeclineKeptWhileTheQuestionMayBeOpen(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Now())
	svc := coretest.Service(t, coretest.OpenStoreOn(t, clock.Now), coretest.Options{Clock: clock})
	b := mcp.ServiceBackend{Svc: svc, Agent: "alice"}
	q, err := b.Ask(ctx, core.AskInput{Kind: core.KindClarification, RunID: "r1", Text: "Which region?", Reversibility: core.Reversible,
		Timeout: 48 * time.Hour, OnTimeout: core.OnTimeoutReask, MaxReasks: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.DeclineHostForm(ctx, q.ID, "k"); err != nil {
		t.Fatal(err)
	}
	clock.Set(q.Deadline.Add(time.Second))
	if _, err := svc.Tick(ctx); err != nil { // re-asked: the deadline moves on two days
		t.Fatal(err)
	}
	clock.Advance(25 * time.Hour)
	if q, err = svc.Get(ctx, q.ID); err != nil || !q.Open() {
		t.Fatalf("question %+v, %v; want it open, re-asked", q, err)
	}
	if declined, err := b.HostFormDeclined(ctx, q.ID, "k"); err != nil || !declined {
		t.Fatalf("declined %v, %v: the decline lapsed while its question is open", declined, err)
	}
}

// TestTaskUpdateWithoutAnActionIsRefused: a reply to a task's form whose
// action is missing or not one of the elicitation result's (accept,
// decline, cancel: the pinned schema's ElicitResult) is no reply, and is
// refused (-32602); the form is still asked under its key, and the
// host's well-formed reply is then recorded. Before, anything but
// "accept" was kept as the host's decline: a host that sent its user's
// answer without an action, or as "Accept", lost it, and the task never
// asked that form again.
func TestTaskUpdateWithoutAnActionIsRefused(t *testing.T) {
	e := newTaskEnv(t)
	h := e.host("tok-alice", tasksCaps(true))
	w := h.task(e.ctx, mcp.ToolDecision, queueArgs)
	key := onlyRequest(t, w.InputRequests).key
	for _, reply := range []map[string]any{
		{"content": map[string]any{"option": "sqs"}},
		{"action": "Accept", "content": map[string]any{"option": "sqs"}},
		{"action": "", "content": map[string]any{"option": "sqs"}},
	} {
		var rerr *rpcError
		if err := h.update(e.ctx, w.TaskID, map[string]any{key: reply}); !errors.As(err, &rerr) || rerr.Code != -32602 {
			t.Errorf("reply %v: %v, want -32602", reply, err)
		}
		got, err := h.get(e.ctx, w.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		if _, asked := got.InputRequests[key]; got.Status != "input_required" || !asked {
			t.Fatalf("after reply %v: %s with %v, want the form still asked under %s", reply, got.Status, got.InputRequests, key)
		}
	}
	if err := h.update(e.ctx, w.TaskID, map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"option": "sqs"}}}); err != nil {
		t.Fatal(err)
	}
	if q, _ := e.svc.Get(e.ctx, core.QuestionID(w.TaskID)); q.State != core.StateAnswered || q.Resolution.OptionID != "sqs" {
		t.Fatalf("the host's answer after the refused replies: %s %+v", q.State, q.Resolution)
	}
}

// TestInputRequiredReplyWithoutAnActionIsRefused: on 2026-07-28 without
// Tasks, a retry whose reply to the form stands under its key but is no
// elicitation result (its action missing, or not accept, decline or
// cancel: the pinned schema's ElicitResult) is refused (-32602), as
// tasks/update refuses one, at once and changing nothing; the same
// request state and key then take the host's well-formed reply. Before,
// it was read as no reply: the call waited for chat, the host's answer
// silently dropped.
func TestInputRequiredReplyWithoutAnActionIsRefused(t *testing.T) {
	e := newMRTREnv(t)
	host := formHost(t, e.b)
	first := asInputRequired(t, must(t)(host.callTool(e.ctx, mcp.ToolDecision, queueArgs)))
	key := onlyRequest(t, first.InputRequests).key
	// One with no action at all the SDK's transport refuses itself,
	// before the call reaches askbridge: it cannot tell what kind of
	// response it is. It is refused all the same, with -32020.
	var rerr *rpcError
	if _, err := retryWith(e.ctx, host, mcp.ToolDecision, queueArgs, first.RequestState, key,
		map[string]any{"content": map[string]any{"option": "nats"}}); !errors.As(err, &rerr) {
		t.Errorf("a reply without an action: %v, want a JSON-RPC error", err)
	}
	for _, reply := range []map[string]any{
		{"action": "Accept", "content": map[string]any{"option": "nats"}},
		{"action": "", "content": map[string]any{"option": "nats"}},
		{"action": nil, "content": map[string]any{"option": "nats"}},
		{"role": "assistant", "content": map[string]any{"type": "text", "text": "nats"}, "model": "m"},
	} {
		// Refused at once: a reply read as none waits for chat, which
		// nobody here gives.
		ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
		_, err := retryWith(ctx, host, mcp.ToolDecision, queueArgs, first.RequestState, key, reply)
		cancel()
		if !errors.As(err, &rerr) || rerr.Code != -32602 || !strings.Contains(rerr.Message, first.RequestState) {
			t.Errorf("reply %v: %v, want -32602 naming the question", reply, err)
		}
		if q, _ := e.svc.Get(e.ctx, core.QuestionID(first.RequestState)); q == nil || !q.Open() {
			t.Fatalf("after reply %v the question is %+v, want it open", reply, q)
		}
	}
	res := toolResultOf(t, must(t)(retryWith(e.ctx, host, mcp.ToolDecision, queueArgs, first.RequestState, key,
		map[string]any{"action": "accept", "content": map[string]any{"option": "nats"}})))
	if st := structured(t, res); st.State != core.StateAnswered || st.ChosenOptionID != "nats" {
		t.Fatalf("the host's answer after the refused replies: %+v", st)
	}
}

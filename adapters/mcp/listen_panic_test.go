package mcp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
)

// panicsFollowing panics on the wait that follows one task (a wait with
// a slice; the listen's first look at the task, at once, reads it as
// usual), as a bug in a backend, or in building the task, would.
type panicsFollowing struct {
	mcp.ServiceBackend
	id core.QuestionID
}

func (p *panicsFollowing) Wait(ctx context.Context, id core.QuestionID, d time.Duration) (mcp.Status, error) {
	if id == p.id && d > 0 {
		panic("a bug while following a task")
	}
	return p.ServiceBackend.Wait(ctx, id, d)
}

// TestTaskListenFollowerPanicIsAnInternalError: a panic in the goroutine
// that follows a task of a listen stream is logged through the door's
// logger, the stream ends with the listen's response an internal error
// (as every other method's panic is answered), and the server goes on
// serving. Before, nothing recovered it on that goroutine, and the panic
// ended the whole process.
func TestTaskListenFollowerPanicIsAnInternalError(t *testing.T) {
	e := newTaskEnv(t)
	alice := e.host("tok-alice", tasksCaps(false))
	ask := func(q string) string {
		return asTask(t, must(t)(alice.callTool(e.ctx, mcp.ToolClarification, map[string]any{"question": q, "reversibility": "reversible"}))).TaskID
	}
	broken, open := ask("A?"), ask("B?")
	var log logBuffer
	b := &panicsFollowing{ServiceBackend: mcp.ServiceBackend{Svc: e.svc}, id: core.QuestionID(broken)}
	hs := httptest.NewServer(authenticate(mcp.HTTPHandler(b, mcp.Options{Caller: agentOf, WaitSlice: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&log, nil))})))
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	c := &taskClient{t: t, http: &http.Client{Transport: &balancer{r: &replicas{urls: []*url.URL{u}}, token: "tok-alice"}}, url: hs.URL, caps: tasksCaps(false)}
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second) // a stream left open is cut here
	defer cancel()
	stream, err := c.listen(ctx, broken, open)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []json.RawMessage
	for m := range stream {
		msgs = append(msgs, m)
	}
	if ctx.Err() != nil {
		t.Fatalf("the stream stayed open after its follower of task %s panicked: %s", broken, msgs)
	}
	if len(msgs) != 2 || !strings.Contains(string(msgs[0]), "notifications/subscriptions/acknowledged") {
		t.Fatalf("the stream sent %s, want its acknowledgement and its response", msgs)
	}
	var res struct {
		ID    int64     `json:"id"`
		Error *rpcError `json:"error"`
	}
	if err := json.Unmarshal(msgs[1], &res); err != nil || res.ID != 1 || res.Error == nil || res.Error.Code != -32603 || res.Error.Message != "internal error" {
		t.Errorf("the listen's response %s, want -32603 internal error (%v)", msgs[1], err)
	}
	if l := log.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "panicked") || !strings.Contains(l, "a bug while following a task") {
		t.Errorf("the panic was not logged: %q", l)
	}
	if w, err := c.get(e.ctx, open); err != nil || w.Status != "working" {
		t.Fatalf("after the panic, another task reads %+v, %v", w, err)
	}
}

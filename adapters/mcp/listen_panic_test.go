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

// panicsKeepingAlive is a response writer that panics on the keep-alive
// comment of a listen stream, as a middleware's writer with a bug would,
// and writes all else.
type panicsKeepingAlive struct{ http.ResponseWriter }

func (w panicsKeepingAlive) Write(p []byte) (int, error) {
	if strings.HasPrefix(string(p), ": ") {
		panic("a bug while keeping a stream alive")
	}
	return w.ResponseWriter.Write(p)
}

func (w panicsKeepingAlive) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// listenPanicking opens a listen stream on tasks broken and open (both
// open questions, asked by alice) on a door over backend(broken), its
// response writer replaced by wrap when set, and checks what a panic in
// one of the stream's goroutines must leave: the stream ended with its
// acknowledgement and, as every other method's panic is answered, an
// internal error; the panic logged with what, through the door's logger;
// and the server still serving, the other task read as it is.
func listenPanicking(t *testing.T, backend func(e *taskEnv, broken string) mcp.Backend, wrap func(http.ResponseWriter) http.ResponseWriter, what string) {
	t.Helper()
	e := newTaskEnv(t)
	alice := e.host("tok-alice", tasksCaps(false))
	ask := func(q string) string {
		return asTask(t, must(t)(alice.callTool(e.ctx, mcp.ToolClarification, map[string]any{"question": q, "reversibility": "reversible"}))).TaskID
	}
	broken, open := ask("A?"), ask("B?")
	var log logBuffer
	door := authenticate(mcp.HTTPHandler(backend(e, broken), mcp.Options{Caller: agentOf, WaitSlice: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&log, nil))}))
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wrap != nil {
			w = wrap(w)
		}
		door.ServeHTTP(w, r)
	}))
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
		// The handler may be stuck for good: the server is left open, as
		// closing it would wait on that handler.
		t.Fatalf("the stream stayed open after its %s of task %s panicked: %s", what, broken, msgs)
	}
	defer hs.Close()
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
	if l := log.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, what+" panicked") || !strings.Contains(l, "a bug while") {
		t.Errorf("the panic was not logged: %q", l)
	}
	if w, err := c.get(e.ctx, open); err != nil || w.Status != "working" {
		t.Fatalf("after the panic, another task reads %+v, %v", w, err)
	}
}

// TestTaskListenFollowerPanicIsAnInternalError: a panic in the goroutine
// that follows a task of a listen stream is logged, and the stream ends
// with an internal error. Before, nothing recovered it on that
// goroutine, and the panic ended the whole process.
func TestTaskListenFollowerPanicIsAnInternalError(t *testing.T) {
	listenPanicking(t, func(e *taskEnv, broken string) mcp.Backend {
		return &panicsFollowing{ServiceBackend: mcp.ServiceBackend{Svc: e.svc}, id: core.QuestionID(broken)}
	}, nil, "follower")
}

// TestTaskListenKeepAlivePanicIsAnInternalError: a panic while the
// keep-alive writes its comment, with the stream's lock held, is answered
// as a follower's is. Before, the lock stayed held, so the internal error
// waited on it for good: the handler hung and the stream never ended.
func TestTaskListenKeepAlivePanicIsAnInternalError(t *testing.T) {
	listenPanicking(t, func(e *taskEnv, _ string) mcp.Backend { return mcp.ServiceBackend{Svc: e.svc} },
		func(w http.ResponseWriter) http.ResponseWriter { return panicsKeepingAlive{w} }, "keep-alive")
}

package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
)

// sessionRPC is a host of 2025-11-25 speaking raw JSON-RPC over HTTP, in
// a session, so that it can send what the SDK's client never would.
type sessionRPC struct {
	t       *testing.T
	url     string
	token   string
	session string
}

// post sends body and returns the messages of the response.
func (c *sessionRPC) post(ctx context.Context, body string) []json.RawMessage {
	c.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s: %v", body, err)
	}
	defer res.Body.Close()
	if id := res.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	var msgs []json.RawMessage
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			msgs = append(msgs, json.RawMessage(data))
		} else if strings.HasPrefix(sc.Text(), "{") {
			msgs = append(msgs, json.RawMessage(sc.Text()))
		}
	}
	return msgs
}

// open initializes the session.
func (c *sessionRPC) open(ctx context.Context) {
	c.t.Helper()
	c.post(ctx, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if c.session == "" {
		c.t.Fatal("no session opened")
	}
	c.post(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// rpcErrorOf is the error of the response to request id among msgs.
func rpcErrorOf(t *testing.T, msgs []json.RawMessage, id int) *rpcError {
	t.Helper()
	for _, m := range msgs {
		var r struct {
			ID    int       `json:"id"`
			Error *rpcError `json:"error"`
		}
		if json.Unmarshal(m, &r) == nil && r.ID == id {
			return r.Error
		}
	}
	t.Fatalf("no response to request %d among %s", id, msgs)
	return nil
}

// TestTaskMethodWithoutParamsIsRefused: each task method sent in a
// session without params, or with params null (the SDK lets a custom
// method through without them), is refused as invalid params, and the
// server goes on serving. Before, the handler read the nil params and
// the panic, on a goroutine of the SDK's with nothing to recover it,
// ended the process: one request of any agent token stopped askbridge.
func TestTaskMethodWithoutParamsIsRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	hs := httptest.NewServer(authenticate(mcp.HTTPHandler(mcp.ServiceBackend{Svc: newService(t)}, mcp.Options{Caller: agentOf})))
	defer hs.Close()
	c := &sessionRPC{t: t, url: hs.URL, token: "tok-mallory"}
	c.open(ctx)
	id := 1
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		for _, params := range []string{``, `,"params":null`} {
			id++
			msgs := c.post(ctx, `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"`+method+`"`+params+`}`)
			if e := rpcErrorOf(t, msgs, id); e == nil || e.Code != -32602 || e.Message != "params are required" {
				t.Errorf("%s%s: error %+v, want -32602 params are required", method, params, e)
			}
		}
	}
	id++
	if msgs := c.post(ctx, `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"ping"}`); rpcErrorOf(t, msgs, id) != nil {
		t.Errorf("ping after: %s", msgs)
	}
}

// panicky panics on the wait for one question, as a bug in a backend
// (or in the door) would.
type panicky struct {
	mcp.ServiceBackend
	id core.QuestionID
}

func (p *panicky) Wait(ctx context.Context, id core.QuestionID, d time.Duration) (mcp.Status, error) {
	if id == p.id {
		panic("a bug in the backend")
	}
	return p.ServiceBackend.Wait(ctx, id, d)
}

// logBuffer is a log the handler writes while the test reads it.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestPanicInATaskMethodIsAnInternalError: a request whose handler
// panics gets an internal error, the panic is logged, and the server
// goes on serving every other request. Before, the process died.
func TestPanicInATaskMethodIsAnInternalError(t *testing.T) {
	e := newTaskEnv(t)
	alice := e.host("tok-alice", tasksCaps(false))
	id := asTask(t, must(t)(alice.callTool(e.ctx, mcp.ToolClarification, map[string]any{"question": "Which?", "reversibility": "reversible"}))).TaskID
	var log logBuffer
	b := &panicky{ServiceBackend: mcp.ServiceBackend{Svc: e.svc}, id: core.QuestionID(id)}
	hs := httptest.NewServer(authenticate(mcp.HTTPHandler(b, mcp.Options{Caller: agentOf, Logger: slog.New(slog.NewTextHandler(&log, nil))})))
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	c := &taskClient{t: t, http: &http.Client{Transport: &balancer{r: &replicas{urls: []*url.URL{u}}, token: "tok-alice"}}, url: hs.URL, caps: tasksCaps(false)}
	_, err := c.get(e.ctx, id)
	if re, ok := err.(*rpcError); !ok || re.Code != -32603 || re.Message != "internal error" {
		t.Fatalf("tasks/get whose handler panicked: %v, want -32603 internal error", err)
	}
	if l := log.String(); !strings.Contains(l, "panicked") || !strings.Contains(l, "tasks/get") {
		t.Errorf("the panic was not logged: %q", l)
	}
	other := asTask(t, must(t)(c.callTool(e.ctx, mcp.ToolClarification, map[string]any{"question": "And?", "reversibility": "reversible"}))).TaskID
	if w, err := c.get(e.ctx, other); err != nil || w.Status != "working" {
		t.Fatalf("after the panic, another task reads %+v, %v", w, err)
	}
}

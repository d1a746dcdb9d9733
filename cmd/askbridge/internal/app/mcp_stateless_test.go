package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
	"github.com/askbridge/askbridge/internal/redistest"
)

// The 2026-07-28 protocol end to end: requests without sessions, and the
// Tasks extension, whose client side the Go SDK lacks, so these tests
// speak it from the specification (adapters/mcp/testdata/SOURCES names
// the revision): one JSON-RPC request per POST (or per line over stdio),
// carrying its version, client info and capabilities in _meta.

// tasksMeta is a 2026-07-28 request's _meta, declaring the extension.
var tasksMeta = map[string]any{
	"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
	"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "task-host", "version": "1"},
	"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
}

// rpcRequest is one request's body; name goes in Mcp-Name.
func rpcRequest(id int, method string, params map[string]any) []byte {
	p := map[string]any{"_meta": tasksMeta}
	for k, v := range params {
		p[k] = v
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": p})
	return b
}

// rpcResponse finds request id's response among messages and returns its
// result, or its error as an error.
func rpcResponse(id int, msgs [][]byte) (json.RawMessage, error) {
	for _, m := range msgs {
		var r struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(m, &r) != nil || r.ID != id {
			continue
		}
		if r.Error != nil {
			return nil, fmt.Errorf("JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
		}
		return r.Result, nil
	}
	return nil, fmt.Errorf("no response to request %d", id)
}

// taskRPC posts one 2026-07-28 request to base's /mcp as token.
func taskRPC(ctx context.Context, base, token string, id int, method, name string, params map[string]any) (json.RawMessage, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", bytes.NewReader(rpcRequest(id, method, params)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.Header.Get("Mcp-Session-Id") != "" {
		return nil, fmt.Errorf("%s: the response opened a session", method)
	}
	var msgs [][]byte
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			line = data
		}
		msgs = append(msgs, append([]byte(nil), line...))
	}
	return rpcResponse(id, msgs)
}

// taskOf reads a task (from tools/call or tasks/get).
type taskOf struct {
	ResultType string `json:"resultType"`
	TaskID     string `json:"taskId"`
	Status     string `json:"status"`
	Result     *struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent struct {
			QuestionID string `json:"question_id"`
			State      string `json:"state"`
			Approved   *bool  `json:"approved"`
		} `json:"structuredContent"`
	} `json:"result"`
}

// taskReader reads a request's result as a task, failing t on an error.
func taskReader(t *testing.T) func(json.RawMessage, error) taskOf {
	return func(raw json.RawMessage, err error) taskOf {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var w taskOf
		if err := json.Unmarshal(raw, &w); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return w
	}
}

// TestMCPTaskAcrossReplicasAndRestart is the whole case: a host
// speaking 2026-07-28 calls request_approval on one replica and gets a
// task at once; polls it on another; the first replica restarts; an
// operator approves on a third; and the restarted replica returns the
// human's answer. Then the SDK's own client, on 2026-07-28 with no
// session, collects the same answer through both replicas in turn.
func TestMCPTaskAcrossReplicasAndRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	s := app.Settings{RedisURL: app.Secret(redistest.Start(t).URL()), ActorKey: "shared-actor-key-0123456789"}
	a, b, c := apptest.Start(t, s), apptest.Start(t, s), apptest.Start(t, s)
	readTask := taskReader(t)

	created := readTask(taskRPC(ctx, a.URL, apptest.AgentA, 1, "tools/call", "request_approval", map[string]any{
		"name": "request_approval", "arguments": map[string]any{"tool": "deploy", "arguments": map[string]any{"env": "prod"}, "reversibility": "hard_to_reverse"},
	}))
	if created.ResultType != "task" || created.Status != "working" || created.TaskID == "" {
		t.Fatalf("tools/call returned %+v, want a working task", created)
	}
	get := func(m *app.Main, id int) taskOf {
		t.Helper()
		return readTask(taskRPC(ctx, m.URL, apptest.AgentA, id, "tasks/get", created.TaskID, map[string]any{"taskId": created.TaskID}))
	}
	if w := get(b, 2); w.Status != "working" {
		t.Fatalf("polled on the other replica: %+v", w)
	}
	if _, err := taskRPC(ctx, b.URL, apptest.AgentB, 3, "tasks/get", created.TaskID, map[string]any{"taskId": created.TaskID}); err == nil || !strings.Contains(err.Error(), "-32602") {
		t.Fatalf("another agent's tasks/get: %v, want -32602", err)
	}

	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a = apptest.Start(t, s)
	if _, err := client.New(c.URL, apptest.OpTok).Answer(ctx, core.QuestionID(created.TaskID), client.AnswerRequest{ChosenOptionID: core.ApproveOption}); err != nil {
		t.Fatal(err)
	}
	done := get(a, 4)
	if done.Status != "completed" || done.Result == nil || done.Result.StructuredContent.Approved == nil || !*done.Result.StructuredContent.Approved ||
		!strings.Contains(done.Result.Content[0].Text, created.TaskID) {
		t.Fatalf("after the restart: %+v", done)
	}

	// The SDK's client: no session, each request on the next replica.
	lb := &roundRobin{to: []string{a.URL, b.URL}, token: apptest.AgentA}
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test-host", Version: "1"}, nil).Connect(ctx,
		&mcpsdk.StreamableClientTransport{Endpoint: a.URL + "/mcp", HTTPClient: &http.Client{Transport: lb}, MaxRetries: -1},
		&mcpsdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" || cs.ID() != "" {
		t.Fatalf("negotiated %s, session %q", v, cs.ID())
	}
	for range 2 {
		res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "get_answer", Arguments: map[string]any{"question_id": created.TaskID}})
		if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcpsdk.TextContent).Text, created.TaskID) {
			t.Fatalf("get_answer: %+v, %v", res, err)
		}
	}
	if len(lb.hosts()) != 2 {
		t.Errorf("requests reached %v, want both replicas", lb.hosts())
	}
}

// roundRobin sends each request to the next server in turn, as a load
// balancer without affinity does.
type roundRobin struct {
	to    []string
	token string
	mu    sync.Mutex
	n     int
	seen  map[string]bool
}

func (r *roundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	u, _ := url.Parse(r.to[r.n%len(r.to)])
	r.n++
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[u.Host] = true
	r.mu.Unlock()
	req = req.Clone(req.Context())
	req.URL.Host, req.Host = u.Host, ""
	req.Header.Set("Authorization", "Bearer "+r.token)
	return http.DefaultTransport.RoundTrip(req)
}

func (r *roundRobin) hosts() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen
}

// TestMCPTaskOverStdio: `askbridge mcp` serves tasks too, through the
// server's API: a task made by one stdio process is followed by another
// (the first killed, as a host restarting kills it), and cancelled by it,
// which withdraws the question.
func TestMCPTaskOverStdio(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	m := apptest.Start(t, app.Settings{})
	env := map[string]string{"ASKBRIDGE_URL": m.URL, "ASKBRIDGE_TOKEN": apptest.AgentA}
	readTask := taskReader(t)
	first := startStdioHost(t, ctx, env)
	created := readTask(first.rpc(1, "tools/call", map[string]any{
		"name": "request_clarification", "arguments": map[string]any{"question": "Which region?", "reversibility": "reversible"},
	}))
	if created.ResultType != "task" || created.TaskID == "" {
		t.Fatalf("tools/call over stdio returned %+v, want a task", created)
	}
	first.stop()
	second := startStdioHost(t, ctx, env)
	defer second.stop()
	if w := readTask(second.rpc(1, "tasks/get", map[string]any{"taskId": created.TaskID})); w.Status != "working" {
		t.Fatalf("polled from another process: %+v", w)
	}
	if _, err := second.rpc(2, "tasks/cancel", map[string]any{"taskId": created.TaskID}); err != nil {
		t.Fatal(err)
	}
	q, err := client.New(m.URL, apptest.OpTok).Get(ctx, core.QuestionID(created.TaskID))
	if err != nil || q.State != core.StateCancelled {
		t.Fatalf("after tasks/cancel the question is %+v (%v)", q, err)
	}
	if w := readTask(second.rpc(3, "tasks/get", map[string]any{"taskId": created.TaskID})); w.Status != "cancelled" {
		t.Fatalf("after tasks/cancel: %+v", w)
	}
}

// TestMCPTaskOverStdioOfAClosedQuestion: a task over stdio for a question
// already closed when asked (here the same tool call asked again after a
// person answered) carries the resume the server built: the person's
// answer, said to be theirs. Before, the stdio process rebuilt it from
// the agent's view, which holds neither, so the task said a human
// answered and gave no answer (and a rule's or a standing approval's
// close read as a person's).
func TestMCPTaskOverStdioOfAClosedQuestion(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	m := apptest.Start(t, app.Settings{})
	env := map[string]string{"ASKBRIDGE_URL": m.URL, "ASKBRIDGE_TOKEN": apptest.AgentA}
	readTask := taskReader(t)
	host := startStdioHost(t, ctx, env)
	defer host.stop()
	ask := map[string]any{"name": "request_clarification", "arguments": map[string]any{
		"question": "Which region?", "reversibility": "reversible", "run_id": "r1", "tool_call_id": "c1"}}
	created := readTask(host.rpc(1, "tools/call", ask))
	if created.ResultType != "task" || created.TaskID == "" {
		t.Fatalf("tools/call over stdio returned %+v, want a task", created)
	}
	if _, err := client.New(m.URL, apptest.OpTok).Answer(ctx, core.QuestionID(created.TaskID), client.AnswerRequest{Answer: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	again := readTask(host.rpc(2, "tools/call", ask))
	if again.TaskID != created.TaskID || again.Status != "completed" || again.Result == nil || len(again.Result.Content) == 0 ||
		!strings.Contains(again.Result.Content[0].Text, "eu-west-1") {
		t.Fatalf("the same call asked again: %+v; want the completed task with the person's answer", again)
	}
}

// stdioHost is `askbridge mcp` as a host runs it, spoken to one JSON-RPC
// message a line.
type stdioHost struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	stderr *apptest.SyncBuffer
}

func startStdioHost(t *testing.T, ctx context.Context, env map[string]string) *stdioHost {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "mcp")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ASKBRIDGE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, apptest.AsProgram+"=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	h := &stdioHost{t: t, cmd: cmd, stderr: &apptest.SyncBuffer{Changed: make(chan struct{}, 64)}}
	h.stdin, _ = cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = h.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h.lines = bufio.NewScanner(stdout)
	h.lines.Buffer(make([]byte, 0, 64<<10), 1<<20)
	return h
}

// rpc sends one request and reads lines until its response.
func (h *stdioHost) rpc(id int, method string, params map[string]any) (json.RawMessage, error) {
	h.t.Helper()
	if _, err := h.stdin.Write(append(rpcRequest(id, method, params), '\n')); err != nil {
		h.t.Fatal(err)
	}
	for h.lines.Scan() {
		if res, err := rpcResponse(id, [][]byte{h.lines.Bytes()}); err == nil || !strings.HasPrefix(err.Error(), "no response") {
			return res, err
		}
	}
	return nil, fmt.Errorf("%s: no response over stdio; stderr: %s", method, h.stderr.String())
}

// stop kills the process, as a host that is killed, or restarts, does:
// the task must not depend on it.
func (h *stdioHost) stop() {
	_ = h.cmd.Process.Kill()
	_ = h.cmd.Wait()
}

// TestMCPHostDoorOn2026: on both transports, a host speaking 2026-07-28
// (the SDK's client, which fulfils input_required results itself) is
// asked through the call's result rather than a request of the server's
// own: its answer comes back with the retried call and is recorded as
// {mcp, agent-a}; when chat answers while the form is open, the retry
// returns chat's answer.
func TestMCPHostDoorOn2026(t *testing.T) {
	current := &mcpsdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"}
	connect := map[string]func(t *testing.T, ctx context.Context, b *apptest.Bridge, copts *mcpsdk.ClientOptions) *mcpsdk.ClientSession{
		"stdio": func(t *testing.T, ctx context.Context, b *apptest.Bridge, copts *mcpsdk.ClientOptions) *mcpsdk.ClientSession {
			cmd := exec.Command(os.Args[0], "mcp")
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "ASKBRIDGE_") {
					cmd.Env = append(cmd.Env, kv)
				}
			}
			cmd.Env = append(cmd.Env, apptest.AsProgram+"=1", "ASKBRIDGE_URL="+b.Main.URL, "ASKBRIDGE_TOKEN="+apptest.AgentA)
			cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test-host", Version: "1"}, copts).Connect(ctx, &mcpsdk.CommandTransport{Command: cmd}, current)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			return cs
		},
		"http": func(t *testing.T, ctx context.Context, b *apptest.Bridge, copts *mcpsdk.ClientOptions) *mcpsdk.ClientSession {
			cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test-host", Version: "1"}, copts).Connect(ctx,
				&mcpsdk.StreamableClientTransport{Endpoint: b.Main.URL + "/mcp", HTTPClient: &http.Client{Transport: withToken(apptest.AgentA)}, MaxRetries: -1}, current)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			return cs
		},
	}
	for name, connect := range connect {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			b := apptest.StartBridge(t)
			copts, asked := eliciting(ctx)
			cs := connect(t, ctx, b, copts)
			if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
				t.Fatalf("negotiated %s", v)
			}
			next := func() hostElicitation {
				t.Helper()
				select {
				case e := <-asked:
					return e
				case <-ctx.Done():
					t.Fatal("the host was never asked")
					return hostElicitation{}
				}
			}

			ch := callTool(ctx, cs, "request_clarification", map[string]any{"question": "Which region?", "reversibility": "hard_to_reverse"})
			el := next()
			q := parkedAs(t, ctx, b.Ops, "Which region?")
			el.reply <- &mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "eu-central-1"}}
			res := toolResult(t, ctx, ch)
			fenced(t, resultText(res), fence.VerbAnswered, map[fence.Tag]string{fence.TagAnswer: "eu-central-1", fence.TagDeciderName: "agent-a"})
			if rec, err := b.Ops.Get(ctx, q.ID); err != nil || rec.Resolution.Decider.Surface != core.SurfaceMCP || rec.Resolution.Decider.ID != "agent-a" {
				t.Fatalf("recorded %+v, %v; want the decider {mcp, agent-a}", rec.Resolution, err)
			}

			ch = callTool(ctx, cs, "request_clarification", map[string]any{"question": "Which bucket?", "reversibility": "hard_to_reverse"})
			el = next()
			q = parkedAs(t, ctx, b.Ops, "Which bucket?")
			b.Slack.Reply(t, apptest.SlackAlice, b.Slack.Card(t, q.ID, nil), nil, "the shared one")
			if _, err := b.Agent.WaitOnce(ctx, q.ID, 10*time.Second); err != nil {
				t.Fatal(err)
			}
			el.reply <- &mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "a new one"}}
			res = toolResult(t, ctx, ch)
			fenced(t, resultText(res), fence.VerbAnswered, map[fence.Tag]string{fence.TagAnswer: "the shared one", fence.TagDeciderName: apptest.SlackAlice.Name})
		})
	}
}

package app

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// declineAgent is the agent whose host may answer on the route the
// tests' server runs.
var declineAgent = httpapi.Token{Name: "agent-a", Secret: "secret-agent-a-0123456789", Role: httpapi.RoleAgent}

// declineServer runs the API as the program wires it for declines
// (hostDeclines), over a service whose default route lets agent-a's host
// answer.
func declineServer(t *testing.T) (*core.Service, *httptest.Server) {
	t.Helper()
	routes := coretest.APIRoutes()
	routes[core.DefaultRoute].Deciders[core.SurfaceMCP] = []string{declineAgent.Name}
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: routes})
	api, err := httpapi.New(svc, httpapi.Options{Tokens: []httpapi.Token{declineAgent}, Log: zerolog.Nop(), HostDeclines: hostDeclines(svc)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return svc, srv
}

// stdioProcess is the MCP server `askbridge mcp` runs, on its own
// backend over the API at url, spoken to one JSON-RPC message a line
// through pipes, as a host speaks to the process.
type stdioProcess struct {
	t     *testing.T
	in    io.WriteCloser
	lines *bufio.Scanner
}

func startStdioProcess(t *testing.T, ctx context.Context, url string) *stdioProcess {
	t.Helper()
	b := clientBackend{c: client.New(url, declineAgent.Secret), url: url, tokenFrom: "test", keys: newAskKeys(), self: &self{}, kept: &kept{}}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = mcp.NewServer(b, mcp.Options{Version: "test", Retention: b.kept.retention}).Run(ctx, &mcpsdk.IOTransport{Reader: inR, Writer: outW})
	}()
	t.Cleanup(func() {
		cancel()
		_ = inW.Close()
		_ = outR.Close()
		<-done
	})
	p := &stdioProcess{t: t, in: inW, lines: bufio.NewScanner(outR)}
	p.lines.Buffer(make([]byte, 0, 64<<10), 1<<20)
	return p
}

// rpc sends one 2026-07-28 request from a host that takes tasks and form
// elicitations, and returns its result.
func (p *stdioProcess) rpc(id int, method string, params map[string]any) json.RawMessage {
	p.t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo":      map[string]any{"name": "task-host", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{
			"extensions":  map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}},
			"elicitation": map[string]any{"form": map[string]any{}},
		},
	}
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := p.in.Write(append(req, '\n')); err != nil {
		p.t.Fatal(err)
	}
	for p.lines.Scan() {
		var res struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(p.lines.Bytes(), &res) != nil || res.ID != id {
			continue // a notification, or another's response
		}
		if res.Error != nil {
			p.t.Fatalf("%s: %s", method, res.Error)
		}
		return res.Result
	}
	p.t.Fatalf("%s: no response", method)
	return nil
}

// hostTask is a task as the host reads it.
type hostTask struct {
	TaskID        string                     `json:"taskId"`
	Status        string                     `json:"status"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
}

func readHostTask(t *testing.T, raw json.RawMessage) hostTask {
	t.Helper()
	var w hostTask
	if err := json.Unmarshal(raw, &w); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return w
}

// TestMCPStdioKeepsTheHostsDecline: over `askbridge mcp`, as over /mcp,
// a host that declines a task's form has answered it: the task goes back
// to working, for this process and for the next one a host starts, the
// question stays open for chat, and the decline is the one /mcp keeps
// (the MCP door's own backend reads it). Before, the stdio process kept
// no decline: the task showed the declined form as outstanding again, at
// every poll, for as long as the question was open.
func TestMCPStdioKeepsTheHostsDecline(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	svc, srv := declineServer(t)
	host := startStdioProcess(t, ctx, srv.URL)
	created := readHostTask(t, host.rpc(1, "tools/call", map[string]any{"name": "request_clarification",
		"arguments": map[string]any{"question": "Which queue?", "reversibility": "reversible"}}))
	if created.Status != "input_required" || len(created.InputRequests) != 1 {
		t.Fatalf("created %+v, want input_required with the host's form", created)
	}
	var key string
	for k := range created.InputRequests {
		key = k
	}
	host.rpc(2, "tasks/update", map[string]any{"taskId": created.TaskID,
		"inputResponses": map[string]any{key: map[string]any{"action": "decline"}}})

	again := startStdioProcess(t, ctx, srv.URL) // a host restarted: nothing kept in the process
	for i, p := range []*stdioProcess{host, again} {
		got := readHostTask(t, p.rpc(3+i, "tasks/get", map[string]any{"taskId": created.TaskID}))
		if got.Status != "working" || len(got.InputRequests) != 0 {
			t.Fatalf("process %d after the host declined: %s with %d requests, want working with none", i, got.Status, len(got.InputRequests))
		}
	}
	id := core.QuestionID(created.TaskID)
	if q, err := svc.Get(ctx, id); err != nil || !q.Open() {
		t.Fatalf("after the host declined the question is %+v, %v; want it open for chat", q, err)
	}
	if yes, err := (mcp.ServiceBackend{Svc: svc, Agent: core.AgentID(declineAgent.Name)}).HostFormDeclined(ctx, id, key); err != nil || !yes {
		t.Fatalf("/mcp's backend reads the decline as %v, %v; want the one kept through the API", yes, err)
	}
	// A later accept under the declined key changes nothing.
	host.rpc(5, "tasks/update", map[string]any{"taskId": created.TaskID,
		"inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"answer": "late"}}}})
	if q, err := svc.Get(ctx, id); err != nil || !q.Open() {
		t.Fatalf("a reply to a declined form was recorded: %+v, %v", q, err)
	}
}

// TestMCPStdioOnAnOlderServer: against a server that keeps no declines
// and does not say its retention (one older than those routes), a host's
// decline is acknowledged and the form asked again, as before, rather
// than the host told its task is gone; and a task's ttlMs counts the
// least retention any bridge keeps, asking the server for it once, not
// at every call.
func TestMCPStdioOnAnOlderServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	routes := coretest.APIRoutes()
	routes[core.DefaultRoute].Deciders[core.SurfaceMCP] = []string{declineAgent.Name}
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: routes})
	api, err := httpapi.New(svc, httpapi.Options{Tokens: []httpapi.Token{declineAgent}, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/retention" {
			asked.Add(1)
			httpapi.WriteError(w, http.StatusNotFound, core.CodeNotFound, client.NoRouteMessage)
			return
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	host := startStdioProcess(t, ctx, srv.URL)
	var created struct {
		hostTask
		TTLMs *int64 `json:"ttlMs"`
	}
	if err := json.Unmarshal(host.rpc(1, "tools/call", map[string]any{"name": "request_clarification",
		"arguments": map[string]any{"question": "Which queue?", "reversibility": "reversible"}}), &created); err != nil {
		t.Fatal(err)
	}
	q, err := svc.Get(ctx, core.QuestionID(created.TaskID))
	if err != nil {
		t.Fatal(err)
	}
	if floor := q.Deadline.Add(core.MinRetention).Sub(q.CreatedAt).Milliseconds(); created.TTLMs == nil || *created.TTLMs != floor {
		t.Errorf("ttlMs %v, want %d: the least retention, never more than the truth", created.TTLMs, floor)
	}
	var key string
	for k := range created.InputRequests {
		key = k
	}
	host.rpc(2, "tasks/update", map[string]any{"taskId": created.TaskID,
		"inputResponses": map[string]any{key: map[string]any{"action": "decline"}}})
	if got := readHostTask(t, host.rpc(3, "tasks/get", map[string]any{"taskId": created.TaskID})); got.Status != "input_required" {
		t.Errorf("after a decline the server could not keep: %s, want the form asked again", got.Status)
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("the retention was asked for %d times, want once until it is stale", n)
	}
}

package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// TestMCPStdioErrors: the stdio process's errors say what is wrong and
// what to do: the server unreachable (its URL and the cause), the token
// refused (and where it came from), a bad log level.
func TestMCPStdioErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	m := apptest.Start(t, app.Settings{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now

	args := map[string]any{"question": "Anyone?", "reversibility": "reversible"}
	for _, c := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"unreachable", map[string]string{"ASKBRIDGE_URL": down, "ASKBRIDGE_TOKEN": apptest.AgentA},
			[]string{"askbridge server at " + down + " is not reachable (connection refused)", "askbridge serve"}},
		{"unknown token", map[string]string{"ASKBRIDGE_URL": m.URL, "ASKBRIDGE_TOKEN": "not-a-token-at-all-0000"},
			[]string{"refused the token from ASKBRIDGE_TOKEN"}},
		{"observer token", map[string]string{"ASKBRIDGE_URL": m.URL, "ASKBRIDGE_TOKEN": apptest.ObsTok},
			[]string{"refused the token from ASKBRIDGE_TOKEN", "agent token"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs, stderr, err := stdioSession(t, ctx, c.env, nil, nil)
			if err != nil {
				t.Fatalf("askbridge mcp: %v\n%s", err, stderr)
			}
			res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "request_clarification", Arguments: args})
			if err != nil || !res.IsError {
				t.Fatalf("got %+v, %v; want a tool error", res, err)
			}
			for _, w := range c.want {
				if !strings.Contains(resultText(res), w) {
					t.Errorf("tool error %q does not say %q", resultText(res), w)
				}
			}
			// By default the host's log panel gets warnings and errors
			// only: the SDK's own info lines (a session connected) stay out.
			_ = cs.Close() // waits for the process to exit, so stderr is complete
			if out := stderr.String(); strings.Contains(out, "level=INFO") || strings.Contains(out, "level=DEBUG") {
				t.Errorf("stderr at the default level:\n%s", out)
			}
		})
	}

	t.Run("bad log level", func(t *testing.T) {
		_, stderr, err := stdioSession(t, ctx, map[string]string{"ASKBRIDGE_URL": m.URL, "ASKBRIDGE_TOKEN": apptest.AgentA, "ASKBRIDGE_LOG_LEVEL": "chatty"}, nil, nil)
		if err == nil {
			t.Fatal("askbridge mcp started with a bad log level")
		}
		for deadline := time.After(10 * time.Second); !stderr.Contains("ASKBRIDGE_LOG_LEVEL"); {
			select {
			case <-stderr.Changed:
			case <-deadline:
				t.Fatalf("stderr %q does not name ASKBRIDGE_LOG_LEVEL", stderr)
			}
		}
	})
}

func TestMCPLogLevel(t *testing.T) {
	for in, want := range map[string]slog.Level{"": slog.LevelWarn, "debug": slog.LevelDebug, "INFO": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError} {
		if got, err := app.MCPLogLevel(in); err != nil || got != want {
			t.Errorf("mcpLogLevel(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := app.MCPLogLevel("loud"); err == nil || !strings.Contains(err.Error(), "ASKBRIDGE_LOG_LEVEL") {
		t.Errorf("a bad level: %v", err)
	}
}

// recording wraps a client transport and keeps every message the client
// reads from the server.
type recording struct {
	mcpsdk.Transport
	mu   sync.Mutex
	read []jsonrpc.Message
}

type recordingConn struct {
	mcpsdk.Connection
	r *recording
}

func (r *recording) Connect(ctx context.Context) (mcpsdk.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{c, r}, nil
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil {
		c.r.mu.Lock()
		c.r.read = append(c.r.read, m)
		c.r.mu.Unlock()
	}
	return m, err
}

// TestMCPStdioCancelSendsNoResponse: after the host sends
// notifications/cancelled for a tool call, the process sends no response
// for it (MCP 2025-11-25), and the question stays parked for get_answer.
func TestMCPStdioCancelSendsNoResponse(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	m := apptest.Start(t, app.Settings{})
	ops := client.New(m.URL, apptest.OpTok)
	rec := &recording{}
	cs, stderr, err := stdioSession(t, ctx, map[string]string{"ASKBRIDGE_URL": m.URL, "ASKBRIDGE_TOKEN": apptest.AgentA, "ASKBRIDGE_LOG_LEVEL": "debug"}, nil,
		func(tr mcpsdk.Transport) mcpsdk.Transport { rec.Transport = tr; return rec })
	if err != nil {
		t.Fatalf("askbridge mcp: %v\n%s", err, stderr)
	}
	callCtx, stopCall := context.WithCancel(ctx)
	ch := callTool(callCtx, cs, "request_clarification", map[string]any{"question": "Cancel me?", "reversibility": "reversible"})
	q := parkedAs(t, ctx, ops, "Cancel me?")
	stopCall() // the SDK sends notifications/cancelled for the call
	if r := <-ch; r.err == nil {
		t.Fatalf("the cancelled call returned %+v", r.res)
	}
	for deadline := time.After(30 * time.Second); !stderr.Contains("no response to a cancelled request"); {
		select {
		case <-stderr.Changed:
		case <-deadline:
			t.Fatalf("the process never withheld the response; stderr:\n%s", stderr)
		}
	}
	// Whatever the process wrote before this ping's answer has been read.
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	for _, msg := range rec.read {
		if r, ok := msg.(*jsonrpc.Response); ok && r.Result != nil && strings.Contains(string(r.Result), string(q.ID)) {
			t.Errorf("a response for the cancelled call arrived: %s", r.Result)
		}
	}
	rec.mu.Unlock()
	res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "get_answer", Arguments: map[string]any{"question_id": q.ID}})
	if err != nil || res.IsError || !strings.Contains(resultText(res), "still open") {
		t.Fatalf("get_answer after the cancel: %+v, %v", res, err)
	}
}

// TestREADMEMCPSection keeps the README's MCP section honest: its route
// loads and lets the named agent's host answer, and its two host
// configurations are complete (the stdio command with its server and
// token, the HTTP endpoint with the bearer header).
func TestREADMEMCPSection(t *testing.T) {
	raw, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## MCP\n")
	section, _, _ = strings.Cut(section, "\n## ")
	if !ok {
		t.Fatal("the README has no MCP section")
	}
	blocks := func(lang string) []string {
		var out []string
		for rest := section; ; {
			var b string
			var found bool
			if _, rest, found = strings.Cut(rest, "```"+lang+"\n"); !found {
				return out
			}
			b, rest, _ = strings.Cut(rest, "```")
			out = append(out, b)
		}
	}
	yamls, jsons := blocks("yaml"), blocks("json")
	if len(yamls) != 1 || len(jsons) != 2 {
		t.Fatalf("%d yaml and %d json examples, want 1 and 2", len(yamls), len(jsons))
	}
	f, err := app.ParseFile([]byte(yamls[0]), func(string) string { return "" })
	if err != nil {
		t.Fatalf("the MCP route does not load: %v", err)
	}
	route := app.Settings{File: f}.CoreConfig([]byte("k")).Routes[core.DefaultRoute]
	if !route.Allows(core.Decider{Surface: core.SurfaceMCP, ID: "build-agent"}) || route.Allows(core.Decider{Surface: core.SurfaceMCP, ID: "other-agent"}) {
		t.Errorf("the README's route does not let exactly build-agent's host answer: %+v", route)
	}
	type server struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		Type    string            `json:"type"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	var hosts []server
	for _, b := range jsons {
		var cfg struct {
			MCPServers map[string]server `json:"mcpServers"`
		}
		dec := json.NewDecoder(strings.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil || len(cfg.MCPServers) != 1 {
			t.Fatalf("host configuration %v:\n%s", err, b)
		}
		hosts = append(hosts, cfg.MCPServers["askbridge"])
	}
	stdio, web := hosts[0], hosts[1]
	if stdio.Command != "askbridge" || strings.Join(stdio.Args, " ") != "mcp" || stdio.Env["ASKBRIDGE_URL"] == "" || stdio.Env["ASKBRIDGE_TOKEN"] == "" {
		t.Errorf("the stdio configuration is incomplete: %+v", stdio)
	}
	if _, err := app.MCPLogLevel(stdio.Env["ASKBRIDGE_LOG_LEVEL"]); err != nil {
		t.Errorf("the stdio configuration's log level: %v", err)
	}
	if web.Type != "http" || !strings.HasSuffix(web.URL, "/mcp") || !strings.HasPrefix(web.Headers["Authorization"], "Bearer ") {
		t.Errorf("the HTTP configuration is incomplete: %+v", web)
	}
	// The tasks the section describes are the ones served.
	if want := fmt.Sprintf("`pollIntervalMs: %d`", mcp.DefaultTaskPoll.Milliseconds()); !strings.Contains(section, want) {
		t.Errorf("the README does not give the tasks' poll interval as %s", want)
	}
	for _, m := range []string{"`tasks/get`", "`tasks/update`", "`tasks/cancel`", "`-32602`", "`-32021`", "`subscriptions/listen`"} {
		if !strings.Contains(section, m) {
			t.Errorf("the README's tasks omit %s", m)
		}
	}
}

// TestMCPHTTPCancelSendsNoResponse: over /mcp too, a call the client
// cancels gets no response: its event stream ends without one, and the
// question stays parked. The exchange is raw HTTP, so nothing on the
// client's side can hide a response that was sent.
func TestMCPHTTPCancelSendsNoResponse(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	m := apptest.Start(t, app.Settings{})
	session := ""
	send := func(body string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.URL+"/mcp", strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+apptest.AgentA)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode/100 != 2 {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return nil, fmt.Errorf("POST %s: %d %s", body, resp.StatusCode, b)
		}
		return resp, nil
	}
	post := func(body string) *http.Response {
		t.Helper()
		resp, err := send(body)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	init := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	session = init.Header.Get("Mcp-Session-Id")
	if b, _ := io.ReadAll(init.Body); session == "" || !strings.Contains(string(b), `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: session %q, %s", session, b)
	}
	init.Body.Close()
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()

	// The call's stream ends once its handler has returned; what it carried
	// up to then is all it will ever carry.
	streamed := make(chan string, 1)
	go func() {
		call, err := send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"request_clarification","arguments":{"question":"Cancel me over HTTP?","reversibility":"reversible"}}}`)
		if err != nil {
			t.Errorf("the call: %v", err)
			streamed <- ""
			return
		}
		defer call.Body.Close()
		b, err := io.ReadAll(call.Body)
		if err != nil {
			t.Errorf("reading the call's stream: %v", err)
		}
		streamed <- string(b)
	}()
	q := parkedAs(t, ctx, client.New(m.URL, apptest.OpTok), "Cancel me over HTTP?")
	post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"the user stopped it"}}`).Body.Close()
	var stream string
	select {
	case stream = <-streamed:
	case <-ctx.Done():
		t.Fatal("the cancelled call's stream never ended")
	}
	if strings.Contains(stream, `"id":7`) {
		t.Errorf("the cancelled call got a response:\n%s", stream)
	}
	got, err := client.New(m.URL, apptest.AgentA).Get(ctx, q.ID)
	if err != nil || got.State != core.StateOpen {
		t.Fatalf("after the cancel the question is %+v, %v; want it parked", got, err)
	}
}

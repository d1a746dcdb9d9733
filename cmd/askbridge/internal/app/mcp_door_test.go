package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/redistest"
)

// sessionPost posts body to base's /mcp as token, in session (if set),
// and returns the session the response names and its messages.
func sessionPost(t *testing.T, ctx context.Context, base, token, session, body string) (string, [][]byte) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	defer res.Body.Close()
	var msgs [][]byte
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			msgs = append(msgs, []byte(data))
		}
	}
	if s := res.Header.Get("Mcp-Session-Id"); s != "" {
		session = s
	}
	return session, msgs
}

// TestMCPTaskMethodWithoutParamsLeavesServeRunning: an agent's host on
// 2025-11-25 that sends a task method without params, or with params
// null, is told they are required, and `askbridge serve` goes on serving
// it and everyone else. Before, the door read the missing params, and
// the panic, on a goroutine with nothing to recover it, ended the
// process: any agent token could stop askbridge with one request.
func TestMCPTaskMethodWithoutParamsLeavesServeRunning(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	m := apptest.Start(t, app.Settings{})
	session, _ := sessionPost(t, ctx, m.URL, apptest.AgentB, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	if session == "" {
		t.Fatal("no session")
	}
	sessionPost(t, ctx, m.URL, apptest.AgentB, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	id := 1
	for _, method := range []string{"tasks/cancel", "tasks/get", "tasks/update"} {
		for _, params := range []string{`,"params":null`, ``} {
			id++
			_, msgs := sessionPost(t, ctx, m.URL, apptest.AgentB, session, `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"`+method+`"`+params+`}`)
			if _, err := rpcResponse(id, msgs); err == nil || err.Error() != "JSON-RPC error -32602: params are required" {
				t.Errorf("%s%s: %v, want -32602 params are required", method, params, err)
			}
		}
	}
	q, err := client.New(m.URL, apptest.AgentA).Ask(ctx, client.AskRequest{Kind: core.KindClarification, Question: "Still there?", Reversibility: core.Reversible, RunID: "r1"})
	if err != nil {
		t.Fatalf("the server after: %v", err)
	}
	if _, err := taskRPC(ctx, m.URL, apptest.AgentA, 1, "tasks/get", string(q.ID), map[string]any{"taskId": string(q.ID)}); err != nil {
		t.Fatalf("/mcp after: %v", err)
	}
}

// TestMCPDoorLogsToTheProgram: /mcp's task methods that meet a store
// out of reach say so in core's words (as the tools and the API's 503
// do), and the door tells the program's log, as /v1 does; the SDK's
// chatter (a session per request of 2026-07-28) stays below info.
// Before, the door was built without a logger, so nothing it logged
// reached the program, and the caller read "internal error".
func TestMCPDoorLogsToTheProgram(t *testing.T) {
	rs := redistest.Start(t)
	var buf apptest.SyncBuffer
	m := &app.Main{Settings: app.Settings{RedisURL: app.Secret(rs.URL()), DataDir: t.TempDir(), Addr: "127.0.0.1:0"}}
	m.Settings.File.Tokens = []app.TokenFile{{Name: "agent-a", Role: "agent", Token: apptest.AgentA}}
	m.Log = zerolog.New(&buf).Level(zerolog.InfoLevel)
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	tk := taskReader(t)(taskRPC(ctx, m.URL, apptest.AgentA, 1, "tools/call", "request_clarification",
		map[string]any{"name": "request_clarification", "arguments": map[string]any{"question": "Region?", "reversibility": "reversible"}}))
	rs.Close() // the store goes away
	_, err := taskRPC(ctx, m.URL, apptest.AgentA, 2, "tasks/get", tk.TaskID, map[string]any{"taskId": tk.TaskID})
	if want := "JSON-RPC error -32603: " + core.UnavailableMessage; err == nil || err.Error() != want {
		t.Errorf("tasks/get with the store gone: %v, want %s", err, want)
	}
	var logged bool
	for line := range strings.Lines(buf.String()) {
		var l struct {
			Level, Component, Message, Error string
		}
		_ = json.Unmarshal([]byte(line), &l)
		if l.Component == "mcp" && l.Message == "askbridge mcp: the store is unavailable" && l.Level == "warn" && strings.Contains(l.Error, "connection refused") {
			logged = true
		}
		if strings.Contains(l.Message, "server session") || strings.Contains(l.Message, "server connecting") {
			t.Errorf("the SDK's chatter at info: %s", line)
		}
	}
	if !logged {
		t.Errorf("the door's failure is not in the program's log:\n%s", buf.String())
	}
}

// TestMCPStdioAdminTokenReachesOnlyItsOwn: `askbridge mcp` with an admin
// token (the local one when ASKBRIDGE_TOKEN is unset, or one of the
// configuration's) asks as the agent of the token's name and reaches
// only the questions asked in it, as /mcp does: another agent's question
// is unknown to tasks/get, tasks/cancel and get_answer, and stays open.
// Before, the process read other agents' answers and withdrew their
// questions.
func TestMCPStdioAdminTokenReachesOnlyItsOwn(t *testing.T) {
	const rootTok = "root-admin-token-0123456789abcdef"
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	m := apptest.Start(t, app.Settings{File: app.File{Tokens: []app.TokenFile{{Name: "root", Role: "admin", Token: rootTok}}}})
	agentA, ops := client.New(m.URL, apptest.AgentA), client.New(m.URL, apptest.OpTok)
	ask := func(text string) core.QuestionID {
		q, err := agentA.Ask(ctx, client.AskRequest{Kind: core.KindClarification, Question: text, Reversibility: core.Reversible, RunID: "r1"})
		if err != nil {
			t.Fatal(err)
		}
		return q.ID
	}
	answered, open := ask("Secret plan?"), ask("Other?")
	if _, err := ops.Answer(ctx, answered, client.AnswerRequest{Answer: "launch codes 1234"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		env  map[string]string
	}{
		{"local admin token", map[string]string{"ASKBRIDGE_URL": m.URL, "ASKBRIDGE_DATA_DIR": m.Settings.DataDir}},
		{"admin token of the configuration", map[string]string{"ASKBRIDGE_URL": m.URL, "ASKBRIDGE_TOKEN": rootTok}},
	} {
		t.Run(c.name, func(t *testing.T) {
			host := startStdioHost(t, ctx, c.env)
			defer host.stop()
			id := 0
			rpc := func(method string, params map[string]any) (json.RawMessage, error) {
				id++
				return host.rpc(id, method, params)
			}
			others := func() {
				t.Helper()
				for _, method := range []string{"tasks/get", "tasks/cancel"} {
					for _, q := range []core.QuestionID{answered, open} {
						if _, err := rpc(method, map[string]any{"taskId": string(q)}); err == nil || !strings.Contains(err.Error(), "-32602") {
							t.Errorf("%s of agent-a's %s: %v, want -32602 Task not found", method, q, err)
						}
					}
				}
				raw, err := rpc("tools/call", map[string]any{"name": "get_answer", "arguments": map[string]any{"question_id": string(answered)}})
				var res struct {
					IsError bool `json:"isError"`
				}
				if err != nil || json.Unmarshal(raw, &res) != nil || !res.IsError || strings.Contains(string(raw), "launch codes") || !strings.Contains(string(raw), "no such question") {
					t.Errorf("get_answer of agent-a's answered question: %s, %v; want no such question", raw, err)
				}
			}
			others()
			own := taskReader(t)(rpc("tools/call", map[string]any{"name": "request_clarification",
				"arguments": map[string]any{"question": "Mine?", "reversibility": "reversible"}}))
			if w := taskReader(t)(rpc("tasks/get", map[string]any{"taskId": own.TaskID})); w.Status != "working" {
				t.Errorf("its own task: %+v", w)
			}
			if _, err := rpc("tasks/cancel", map[string]any{"taskId": own.TaskID}); err != nil {
				t.Errorf("cancelling its own task: %v", err)
			}
			others()
		})
	}
	if q, err := ops.Get(ctx, open); err != nil || q.State != core.StateOpen {
		t.Errorf("agent-a's open question is %+v (%v), want open", q, err)
	}
}

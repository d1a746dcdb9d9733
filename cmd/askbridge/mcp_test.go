package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// withToken presents a bearer token on every request.
type withToken string

func (tok withToken) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(tok))
	return http.DefaultTransport.RoundTrip(r)
}

func mcpSession(ctx context.Context, url string, tok withToken) (*mcpsdk.ClientSession, error) {
	return mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcpsdk.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: tok}, MaxRetries: -1}, nil)
}

// TestMCPOverHTTP: the program's /mcp takes agent tokens only, asks in the
// token's agent's name, and returns the fenced resume once an operator
// answers through the API.
func TestMCPOverHTTP(t *testing.T) {
	m := start(t, Settings{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	for _, tok := range []withToken{"", "not-a-token-at-all-0000", obsTok} {
		if _, err := mcpSession(ctx, m.URL, tok); err == nil {
			t.Fatalf("token %q opened an MCP session", tok)
		}
	}

	cs, err := mcpSession(ctx, m.URL, agentA)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	type result struct {
		res *mcpsdk.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "request_clarification", Arguments: map[string]any{
			"question": "Which region for the bucket?", "reversibility": "hard_to_reverse", "run_id": "run-mcp",
		}})
		done <- result{res, err}
	}()

	ops := client.New(m.URL, opTok)
	var q *client.Question
	for deadline := time.Now().Add(10 * time.Second); q == nil && time.Now().Before(deadline); {
		page, err := ops.List(ctx, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Questions) > 0 {
			q = page.Questions[0]
		}
	}
	if q == nil || q.Agent != "agent-a" || q.RunID != "run-mcp" {
		t.Fatalf("parked question: %+v", q)
	}
	if _, err := ops.Answer(ctx, q.ID, client.AnswerRequest{Answer: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.res.IsError || len(r.res.Content) == 0 {
		t.Fatalf("tool call: %+v, %v", r.res, r.err)
	}
	text := r.res.Content[0].(*mcpsdk.TextContent).Text
	p, err := fence.ParseResume(text)
	if err != nil || p.QuestionID != q.ID || p.Verb != fence.VerbAnswered {
		t.Fatalf("resume %v:\n%s", err, text)
	}
	if got, _ := ops.Get(ctx, q.ID); got.State != core.StateAnswered {
		t.Fatalf("state %s", got.State)
	}
}

// TestEventsFollow: "askbridge events --follow" prints events as they are
// logged until interrupted.
func TestEventsFollow(t *testing.T) {
	m := start(t, Settings{})
	env := func(k string) string {
		return map[string]string{"ASKBRIDGE_URL": m.URL, "ASKBRIDGE_TOKEN": m.AdminToken}[k]
	}
	ctx, cancel := context.WithCancel(t.Context())
	out := &syncBuffer{changed: make(chan struct{}, 64)}
	code := make(chan int, 1)
	go func() { code <- run(ctx, []string{"events", "--follow"}, env, nil, out, out) }()
	agent := client.New(m.URL, agentA)
	q, err := agent.Ask(t.Context(), clarify("Follow me?"))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for !out.contains(`"question_id":"` + q.ID + `"`) {
		select {
		case <-out.changed:
		case <-deadline:
			t.Fatalf("events --follow printed %q", out.String())
		}
	}
	cancel()
	if c := <-code; c != 0 {
		t.Fatalf("events --follow exited %d", c)
	}
}

// TestCloseEndsMCPCalls: stopping the program ends a tool call that is
// waiting for a human, promptly and with the question still parked, rather
// than leaving it running against a closed store.
func TestCloseEndsMCPCalls(t *testing.T) {
	m := start(t, Settings{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cs, err := mcpSession(ctx, m.URL, agentA)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "request_clarification", Arguments: map[string]any{
			"question": "Still there?", "reversibility": "reversible",
		}})
		done <- err
	}()
	ops := client.New(m.URL, opTok)
	for parked := false; !parked; {
		page, err := ops.List(ctx, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		parked = len(page.Questions) == 1
	}
	// A call still running would hold the graceful shutdown past its
	// grace period, and Close would report that.
	if err := m.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the MCP call outlived the program")
	}
}

package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// TestMCPMaxWaitsPerQuestionFromTheEnvironment: ASKBRIDGE_MAX_WAITS_PER_QUESTION
// bounds /mcp's waiting calls on one question as it bounds the API's
// waits: with 1, while one get_answer waits on a question a second on it
// waits not at all, but returns at once the still-parked result naming
// the question and the bound; the answer then wakes the first. Before,
// serve never gave the setting to the MCP door, whose bound stayed 256,
// so the second call parked too.
func TestMCPMaxWaitsPerQuestionFromTheEnvironment(t *testing.T) {
	s := apptest.FromEnv(t, map[string]string{"ASKBRIDGE_MAX_WAITS_PER_QUESTION": "1"})
	s.DataDir = "" // the test's own
	m := apptest.Start(t, s)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	q, err := client.New(m.URL, apptest.AgentA).Ask(ctx, client.AskRequest{Kind: core.KindClarification, Question: "Which region?",
		Reversibility: core.Reversible, RunID: "run-1", ToolCallID: "toolu_1"})
	if err != nil {
		t.Fatal(err)
	}

	// A call tells of its wait, before it waits, with a progress
	// notification under its token: sent only once it holds its place
	// among the question's waiters.
	waiting := make(chan any, 16)
	copts := &mcpsdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcpsdk.ProgressNotificationClientRequest) {
		select {
		case waiting <- req.Params.ProgressToken:
		default:
		}
	}}
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, copts).Connect(ctx,
		&mcpsdk.StreamableClientTransport{Endpoint: m.URL + "/mcp", HTTPClient: &http.Client{Transport: withToken(apptest.AgentA)}, MaxRetries: -1}, legacyMCP)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	defer cancel() // before the close: a call still waiting ends with the test
	getAnswer := func(token string) <-chan toolCall {
		params := &mcpsdk.CallToolParams{Name: "get_answer", Arguments: map[string]any{"question_id": string(q.ID), "wait_seconds": 300}}
		params.SetProgressToken(token)
		out := make(chan toolCall, 1)
		go func() {
			res, err := cs.CallTool(ctx, params)
			out <- toolCall{res, err}
		}()
		return out
	}

	first := getAnswer("first")
	select {
	case tok := <-waiting:
		if tok != "first" {
			t.Fatalf("progress under %v, want the first call's", tok)
		}
	case r := <-first:
		t.Fatalf("the first get_answer returned without waiting: %+v, %v", r.res, r.err)
	case <-ctx.Done():
		t.Fatal("the first get_answer never waited")
	}

	second := getAnswer("second")
	var r toolCall
	select {
	case r = <-second:
	case tok := <-waiting:
		t.Fatalf("a call past the bound of 1 waits too (progress under %v): the door's bound is not the setting", tok)
	case <-ctx.Done():
		t.Fatal("the second get_answer never returned")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	got := resultText(r.res)
	if !r.res.IsError || !strings.Contains(got, "Question "+string(q.ID)+" is still parked") || !strings.Contains(got, "calls already waiting on it on this server: 1,") {
		t.Fatalf("the call past the bound got %q (error %v), want the still-parked result naming its question and the bound of 1", got, r.res.IsError)
	}
	var st struct {
		QuestionID core.QuestionID `json:"question_id"`
		State      core.State      `json:"state"`
	}
	if b, err := json.Marshal(r.res.StructuredContent); err != nil || json.Unmarshal(b, &st) != nil || st.QuestionID != q.ID || st.State != core.StateOpen {
		t.Fatalf("the call past the bound: structured %+v (%v), want %s open", r.res.StructuredContent, err, q.ID)
	}

	if _, err := client.New(m.URL, m.AdminToken).Answer(ctx, q.ID, client.AnswerRequest{Answer: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	res := toolResult(t, ctx, first)
	if res.IsError {
		t.Fatalf("the waiting call after the answer: %q, an error", resultText(res))
	}
	fenced(t, resultText(res), fence.VerbAnswered, map[fence.Tag]string{fence.TagAnswer: "eu-west-1"})
}

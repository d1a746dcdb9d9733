package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
	"github.com/askbridge/askbridge/fence/fencetest"
)

// agentReads is everything an agent can read about a question: the
// wait's and the read's raw JSON, the Go client's WaitResponse, get_answer
// over stdio and over HTTP (text and structured content), and what a
// late cancel and a late host answer are told.
type agentReads struct {
	m           *app.Main
	agent       *client.Client
	stdio, http *mcpsdk.ClientSession
}

// newAgentReads opens agent-a's every way of reading m: the API (agent),
// MCP over stdio and MCP over HTTP.
func newAgentReads(t *testing.T, ctx context.Context, m *app.Main, agent *client.Client) agentReads {
	t.Helper()
	cs, stderr, err := stdioSession(t, ctx, map[string]string{"ASKBRIDGE_URL": m.URL, "ASKBRIDGE_TOKEN": apptest.AgentA}, nil, nil)
	if err != nil {
		t.Fatalf("askbridge mcp: %v\n%s", err, stderr)
	}
	hs, err := mcpSession(ctx, m.URL, apptest.AgentA)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hs.Close() })
	return agentReads{m: m, agent: agent, stdio: cs, http: hs}
}

func (r agentReads) raw(t *testing.T, method, path string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, r.m.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+apptest.AgentA)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// closer closes, or moves on, a question the fence tests asked.
type closer = func(t *testing.T, id core.QuestionID)

// answering answers as c with req.
func answering(ctx context.Context, c *client.Client, req client.AnswerRequest) closer {
	return func(t *testing.T, id core.QuestionID) {
		t.Helper()
		if _, err := c.Answer(ctx, id, req); err != nil {
			t.Fatalf("answer %+v: %v", req, err)
		}
	}
}

// inTurn is fs one after the other.
func inTurn(fs ...closer) closer {
	return func(t *testing.T, id core.QuestionID) {
		for _, f := range fs {
			f(t, id)
		}
	}
}

// askClosed asks req, closes the question with close, waits for it to
// reach state and reads it every way an agent can (read).
func (r agentReads) askClosed(t *testing.T, ctx context.Context, mk *fencetest.Markers, req client.AskRequest, close closer, state core.State) {
	t.Helper()
	q, err := r.agent.Ask(ctx, req)
	if err != nil {
		t.Fatalf("ask: %v", err)
	}
	close(t, q.ID)
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	w, err := r.agent.Wait(wctx, q.ID)
	if err != nil || w.State != state {
		t.Fatalf("wait: %+v, %v; want %s", w, err, state)
	}
	r.read(t, ctx, mk, q.ID)
}

func (r agentReads) read(t *testing.T, ctx context.Context, mk *fencetest.Markers, id core.QuestionID) {
	t.Helper()
	for _, path := range []string{"/v1/questions/" + string(id) + "/wait?timeout=0s", "/v1/questions/" + string(id), "/v1/questions/" + string(id) + "/mcp"} {
		status, body := r.raw(t, http.MethodGet, path)
		if status != http.StatusOK {
			t.Fatalf("GET %s as the agent: %d %s", path, status, body)
		}
		mk.CheckJSON(t, "GET "+path, body, fencetest.ApprovedArguments)
	}
	w, err := r.agent.WaitOnce(ctx, id, 0)
	if err != nil || w.Resume == nil {
		t.Fatalf("wait: %+v, %v", w, err)
	}
	texts := []string{w.Resume.Text}
	for _, c := range w.Calls {
		texts = append(texts, c.Resume.Text)
	}
	for _, text := range texts {
		if _, err := fence.ParseResume(text); err != nil {
			t.Errorf("a resume the Go client got does not parse: %v\n%s", err, text)
		}
	}
	whole, _ := json.Marshal(w)
	mk.CheckJSON(t, "the Go client's WaitResponse", whole, fencetest.ApprovedArguments)

	for name, cs := range map[string]*mcpsdk.ClientSession{"stdio": r.stdio, "http": r.http} {
		res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "get_answer", Arguments: map[string]any{"question_id": id}})
		if err != nil || res.IsError {
			t.Fatalf("get_answer over %s: %+v, %v", name, res, err)
		}
		for _, c := range res.Content {
			tc, ok := c.(*mcpsdk.TextContent)
			if !ok {
				t.Fatalf("get_answer over %s returned %T", name, c)
			}
			if !contains(texts, tc.Text) {
				t.Errorf("get_answer over %s: a text that is none of the wait's resumes:\n%s", name, tc.Text)
			}
			mk.Check(t, "get_answer over "+name+": content text", tc.Text)
		}
		st, _ := json.Marshal(res.StructuredContent)
		mk.CheckJSON(t, "get_answer over "+name+": structuredContent", st, fencetest.ApprovedArguments)
	}

	// A late act is refused with a 409 that says who closed the question.
	for what, err := range map[string]error{
		"a late cancel": func() error { _, err := r.agent.Cancel(ctx, id, "too late"); return err }(),
		"a late host answer": func() error {
			_, err := r.agent.AnswerInHost(ctx, id, client.MCPAnswerRequest{Answer: "too late"})
			return err
		}(),
	} {
		if err == nil {
			t.Fatalf("%s on a closed question succeeded", what)
		}
		mk.Check(t, what, err.Error())
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// csrfField is the CSRF token a console page's forms carry.
var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

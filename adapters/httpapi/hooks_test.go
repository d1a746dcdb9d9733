package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

func hookFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../hooks/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// hookCall is a hook request in flight: the question id arrives with the
// status, the decision with the body.
type hookCall struct {
	resp *http.Response
	id   string
}

func (e *env) startHook(ctx context.Context, path, body string) hookCall {
	e.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+agentA.Secret)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		e.t.Fatalf("hook status %d: %s", resp.StatusCode, b)
	}
	return hookCall{resp: resp, id: resp.Header.Get(httpapi.HeaderQuestionID)}
}

func (c hookCall) body(t *testing.T) string {
	t.Helper()
	defer c.resp.Body.Close()
	b, err := io.ReadAll(c.resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A hook parks its prompt as an approval and answers with the host's
// decision for every outcome a person can give.
func TestHookOutcomes(t *testing.T) {
	e := newEnv(t)
	ops := e.as(operator)
	for _, c := range []struct {
		name, host, fixture string
		answer              func(id string) error
		want                string // a substring of the body; "" for an empty body
	}{
		{"approve", "claude-code", "claude-code/permission-request.bash.json", func(id string) error {
			_, err := ops.Answer(e.ctx(), id, client.AnswerRequest{ChosenOptionID: core.ApproveOption})
			return err
		}, `"decision":{"behavior":"allow"}`},
		{"deny", "codex", "codex/permission-request.bash.json", func(id string) error {
			_, err := ops.Answer(e.ctx(), id, client.AnswerRequest{ChosenOptionID: core.DenyOption, Answer: "not on a Friday"})
			return err
		}, `"behavior":"deny","message":"A person denied this tool call in askbridge. Their reason:\n\u003caskbridge-untrusted-reason\u003e\nnot on a Friday\n`},
		{"edit", "claude-code", "claude-code/pre-tool-use.bash.json", func(id string) error {
			_, err := ops.Answer(e.ctx(), id, client.AnswerRequest{ChosenOptionID: core.ApproveOption, Arguments: json.RawMessage(`{"command":"npm test -- --bail"}`)})
			return err
		}, `"permissionDecision":"allow","permissionDecisionReason":"Approved in askbridge.","updatedInput":{"command":"npm test -- --bail"}`},
		{"decline", "claude-code", "claude-code/permission-request.bash.json", func(id string) error {
			_, err := ops.Decline(e.ctx(), id)
			return err
		}, ""},
		{"decline, PreToolUse", "claude-code", "claude-code/pre-tool-use.bash.json", func(id string) error {
			_, err := ops.Decline(e.ctx(), id)
			return err
		}, `"permissionDecision":"ask"`},
		{"deny, Codex PreToolUse", "codex", "codex/pre-tool-use.bash.json", func(id string) error {
			_, err := ops.Answer(e.ctx(), id, client.AnswerRequest{ChosenOptionID: core.DenyOption})
			return err
		}, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"A person denied this tool call in askbridge, with no reason."}}`},
		{"approve, Codex PreToolUse", "codex", "codex/pre-tool-use.bash.json", func(id string) error {
			_, err := ops.Answer(e.ctx(), id, client.AnswerRequest{ChosenOptionID: core.ApproveOption})
			return err
		}, ""}, // Codex takes no allow from PreToolUse: its own policy goes on
	} {
		t.Run(c.name, func(t *testing.T) {
			// Each case its own session, so no two share a question.
			body := strings.Replace(hookFixture(t, c.fixture), `"session_id": "`, `"session_id": "`+strings.ReplaceAll(c.name, " ", "")+`-`, 1)
			call := e.startHook(e.ctx(), "/v1/hooks/"+c.host, body)
			if call.id == "" {
				t.Fatal("no question id with the status")
			}
			q, err := ops.Get(e.ctx(), call.id)
			if err != nil || q.Call == nil || q.Call.Tool != "Bash" || q.Reversibility != core.HardToReverse {
				t.Fatalf("parked %+v, %v", q, err)
			}
			if err := c.answer(call.id); err != nil {
				t.Fatal(err)
			}
			got := call.body(t)
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Fatalf("body %s, want %q", got, c.want)
			}
			// The host running the hook again for the same prompt gets the
			// same answer at once, from the same question.
			again := e.startHook(e.ctx(), "/v1/hooks/"+c.host, body)
			if again.id != call.id || again.body(t) != got {
				t.Fatal("a re-run did not find the same question")
			}
		})
	}
}

func TestHookRefusals(t *testing.T) {
	e := newEnv(t)
	good := hookFixture(t, "claude-code/permission-request.bash.json")
	for _, c := range []struct {
		name   string
		path   string
		tok    *httpapi.Token
		body   string
		status int
		msg    string
	}{
		{"no token", "/v1/hooks/claude-code", nil, good, 401, ""},
		{"an operator's token", "/v1/hooks/claude-code", &operator, good, 403, "may not answer hooks"},
		{"unknown host", "/v1/hooks/cursor", &agentA, good, 404, `host "cursor" is not one of claude-code, codex`},
		{"missing field", "/v1/hooks/claude-code", &agentA, `{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{}}`, 400, "session_id is required"},
		{"wrong type", "/v1/hooks/codex", &agentA, `{"hook_event_name":"PermissionRequest","session_id":"s","tool_name":"Bash","tool_input":[]}`, 400, "tool_input must be a JSON object"},
		{"not JSON", "/v1/hooks/claude-code", &agentA, `hello`, 400, ""},
		{"bad wait", "/v1/hooks/claude-code?wait=soon", &agentA, good, 400, `wait "soon"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(http.MethodPost, c.path, c.tok, c.body)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if c.msg != "" && !strings.Contains(errorOf(t, r).Message, c.msg) {
				t.Fatalf("message %s, want %q", r.body, c.msg)
			}
		})
	}
	// Nothing was parked by any of them.
	list, err := e.as(operator).List(e.ctx(), "", 50)
	if err != nil || len(list.Questions) != 0 {
		t.Fatalf("parked %d questions, %v", len(list.Questions), err)
	}
}

// A host that stops waiting (the person answered in the terminal first)
// closes the request: the question is withdrawn, "answered at the host".
func TestHookCallerGoneWithdraws(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(e.ctx())
	call := e.startHook(ctx, "/v1/hooks/claude-code", hookFixture(t, "claude-code/permission-request.bash.json"))
	cancel()
	call.resp.Body.Close()
	q, err := e.as(agentA).Wait(e.ctx(), call.id)
	if err != nil {
		t.Fatal(err)
	}
	if q.State != core.StateCancelled {
		t.Fatalf("state %s, want cancelled", q.State)
	}
	full, err := e.as(operator).Get(e.ctx(), call.id)
	if err != nil || full.Resolution == nil || full.Resolution.Reason != httpapi.ReasonAnsweredAtHost {
		t.Fatalf("resolution %+v, %v", full.Resolution, err)
	}
}

// A wait that runs out leaves the prompt to the host and withdraws the
// question, so nothing stays parked that nobody waits for.
func TestHookWaitRunsOut(t *testing.T) {
	e := newEnv(t)
	call := e.startHook(e.ctx(), "/v1/hooks/codex?wait=1ms", hookFixture(t, "codex/permission-request.network.json"))
	if got := call.body(t); got != "" {
		t.Fatalf("body %q, want none (no decision)", got)
	}
	q, err := e.as(operator).Get(e.ctx(), call.id)
	if err != nil || q.State != core.StateCancelled || q.Call.Editable != nil {
		t.Fatalf("question %+v, %v", q, err)
	}
}

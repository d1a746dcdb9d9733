package httpapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// TestMCPDoor: an agent's MCP host may answer the agent's own questions
// where the route lists the agent under mcp; the answer is recorded as
// {mcp, agent} through the chokepoint, a second one hears who was first,
// and another agent's question reads as unknown.
func TestMCPDoor(t *testing.T) {
	e := newEnv(t)
	ctx := e.ctx()
	a, b := e.as(agentA), e.as(agentB)
	id := e.ask(agentA, "run-door")

	if d, err := a.MCPDoor(ctx, id); err != nil || !d.MayAnswer || d.QuestionID != id {
		t.Fatalf("door on the default route: %+v, %v", d, err)
	}
	locked := clarification("run-door")
	locked.Route = "locked"
	lq, err := a.Ask(ctx, locked)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := a.MCPDoor(ctx, lq.ID); err != nil || d.MayAnswer {
		t.Fatalf("door on a route without mcp: %+v, %v", d, err)
	}
	if _, err := a.AnswerInHost(ctx, lq.ID, client.MCPAnswerRequest{Answer: "x"}); !hasStatus(err, http.StatusForbidden) {
		t.Fatalf("host answer off the route: %v, want 403", err)
	}

	for _, other := range []core.QuestionID{id, "aaaaaaaaaaaaaaaaa"} {
		if _, err := b.MCPDoor(ctx, other); !hasStatus(err, http.StatusNotFound) {
			t.Errorf("agent-b's door on %s: %v, want 404", other, err)
		}
		if _, err := b.AnswerInHost(ctx, other, client.MCPAnswerRequest{Answer: "mine"}); !hasStatus(err, http.StatusNotFound) {
			t.Errorf("agent-b's host answer on %s: %v, want 404", other, err)
		}
	}

	out, err := a.AnswerInHost(ctx, id, client.MCPAnswerRequest{Answer: "from the host"})
	if err != nil || !out.Closed {
		t.Fatalf("host answer: %+v, %v", out, err)
	}
	if r := out.Question.Resolution; r.Surface != core.SurfaceMCP || r.State != core.StateAnswered {
		t.Errorf("the agent's view of the host answer: %+v", r)
	}
	rec, err := e.as(operator).Get(ctx, id)
	if err != nil || rec.Resolution.Answer != "from the host" {
		t.Fatalf("recorded %+v, %v", rec.Resolution, err)
	}
	if d, err := a.MCPDoor(ctx, id); err != nil || d.MayAnswer {
		t.Errorf("door on a closed question: %+v, %v", d, err)
	}
	_, err = a.AnswerInHost(ctx, id, client.MCPAnswerRequest{Answer: "again"})
	if !hasStatus(err, http.StatusConflict) || !strings.Contains(err.Error(), "already closed by mcp agent-a") {
		t.Errorf("a second host answer: %v, want 409 naming the first", err)
	}
}

func hasStatus(err error, status int) bool {
	var e *client.Error
	return errors.As(err, &e) && e.Status == status
}

// TestMCPDoorRefusesWhatTheHostCannotGive: the host answers with the
// agent's own token, so the door takes only what an elicitation gives (a
// text, an option, a form's items). A body that also edits the call's
// arguments, decides a batch's calls one by one or grants a standing
// approval is refused with 400 and leaves the question open; before, the
// door dropped those fields and approved the call as asked.
func TestMCPDoorRefusesWhatTheHostCannotGive(t *testing.T) {
	e := newEnv(t)
	agent := e.as(agentA)
	q, err := agent.Ask(e.ctx(), client.AskRequest{Kind: core.KindApproval, RunID: "run-door", ToolCallID: nextCall(),
		Question: "Move the file?", Reversibility: core.Reversible, Tool: "mv",
		Arguments: json.RawMessage(`{"from":"a.txt","to":"b.txt"}`), Editable: &core.Editable{Keys: []string{"to"}}})
	if err != nil {
		t.Fatal(err)
	}
	path := "/v1/questions/" + string(q.ID) + "/mcp/answer"
	for name, body := range map[string]string{
		"edited arguments": `{"chosen_option_id":"approve","arguments":{"from":"a.txt","to":"c.txt"}}`,
		"standing":         `{"chosen_option_id":"approve","standing":{"scope":"run"}}`,
		"calls":            `{"chosen_option_id":"approve","calls":[{"tool_call_id":"x","option_id":"deny"}]}`,
	} {
		r := e.do(http.MethodPost, path, &agentA, body, "Content-Type", "application/json")
		if r.status != http.StatusBadRequest {
			t.Errorf("%s: status %d (%s), want 400", name, r.status, r.body)
			continue
		}
		if d := errorOf(t, r); d.Code != core.CodeInvalid {
			t.Errorf("%s: error %+v, want code %s", name, d, core.CodeInvalid)
		}
	}
	rec, err := e.as(operator).Get(e.ctx(), q.ID)
	if err != nil || rec.State != core.StateOpen {
		t.Fatalf("after the refusals the question is %+v, %v; want it open", rec, err)
	}
	if _, err := agent.AnswerInHost(e.ctx(), q.ID, client.MCPAnswerRequest{ChosenOptionID: core.ApproveOption}); err != nil {
		t.Fatalf("a plain approval through the door: %v", err)
	}
}

package httpapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// TestStandingApprovals: an approve that grants a standing approval, a
// later ask it closes at once, its listing, and its revocation.
func TestStandingApprovals(t *testing.T) {
	e := newEnv(t)
	agent, ops := e.as(agentA), e.as(operator)
	ask := func() *client.AgentQuestion {
		t.Helper()
		q, err := agent.Ask(e.ctx(), client.AskRequest{Kind: core.KindApproval, RunID: "run-1", ToolCallID: nextCall(),
			Question: "Write it?", Reversibility: core.Reversible, Tool: "write_file", Arguments: json.RawMessage(`{"path":"a"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	first := ask()
	out, err := ops.Answer(e.ctx(), first.ID, client.AnswerRequest{ChosenOptionID: core.ApproveOption,
		Standing: &core.StandingRequest{Scope: core.StandingRun}})
	if err != nil || out.Standing == nil || out.Standing.Tool != "write_file" {
		t.Fatalf("approve with standing: %+v, %v", out, err)
	}
	next := ask()
	if next.State != core.StateAnswered || next.Resolution.StandingID != out.Standing.ID {
		t.Fatalf("the covered ask came back %s with %+v", next.State, next.Resolution)
	}
	res, err := agent.WaitOnce(e.ctx(), next.ID, time.Second)
	if err != nil || res.Resume == nil || res.Resume.Structured.Standing == nil || res.Anthropic == nil {
		t.Fatalf("wait on the covered ask: %+v, %v", res, err)
	}
	list, err := ops.Standing(e.ctx())
	if err != nil || len(list) != 1 || list[0].ID != out.Standing.ID {
		t.Fatalf("list: %+v, %v", list, err)
	}
	var apiErr *client.Error
	if _, err := agent.Standing(e.ctx()); !errors.As(err, &apiErr) || apiErr.Status != http.StatusForbidden {
		t.Fatalf("an agent listed standing approvals: %v", err)
	}
	if _, err := ops.RevokeStanding(e.ctx(), out.Standing.ID); err != nil {
		t.Fatal(err)
	}
	// Revoked is gone: a second revoke is told there is no such standing
	// approval (not "no such question"), and why there may be none.
	if _, err := ops.RevokeStanding(e.ctx(), out.Standing.ID); !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound ||
		!strings.Contains(apiErr.Message, "no standing approval "+out.Standing.ID) || !strings.Contains(apiErr.Message, "revoked") {
		t.Fatalf("second revoke: %v", err)
	}
	if q := ask(); !q.Open() {
		t.Fatalf("an ask after the revocation came back %s", q.State)
	}
}

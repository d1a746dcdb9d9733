package httpapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// TestEndRunAgentParamIsAnAdminsOnly: ?agent= names another agent's run,
// which only an admin may end. An agent's token that sends another agent's
// name is refused (403) and no run ends; before, the parameter was dropped
// and the caller's own run of that name ended, with a 200. Its own name is
// taken, and an admin's ends the named agent's run.
func TestEndRunAgentParamIsAnAdminsOnly(t *testing.T) {
	e := newEnv(t)
	ask := func(tok *httpapi.Token) core.QuestionID {
		t.Helper()
		r := e.do("POST", "/v1/questions", tok, `{"kind":"clarification","reversibility":"reversible","run_id":"shared","question":"Q?"}`)
		var q struct{ ID core.QuestionID }
		if err := json.Unmarshal(r.body, &q); err != nil || q.ID == "" {
			t.Fatalf("ask: %d %s", r.status, r.body)
		}
		return q.ID
	}
	open := func(id core.QuestionID) bool {
		t.Helper()
		q, err := e.svc.Get(e.ctx(), id)
		if err != nil {
			t.Fatal(err)
		}
		return q.Open()
	}
	qa, qb := ask(&agentA), ask(&agentB)

	r := e.do("POST", "/v1/runs/shared/end?agent=agent-b", &agentA, "")
	if r.status != http.StatusForbidden || !strings.Contains(errorOf(t, r).Message, "agent") {
		t.Errorf("agent-a naming agent-b's run: %d %s, want 403 naming agent", r.status, r.body)
	}
	if !open(qa) || !open(qb) {
		t.Fatalf("after the refused end, agent-a's question open: %v, agent-b's: %v; want both", open(qa), open(qb))
	}

	if r := e.do("POST", "/v1/runs/shared/end?agent=agent-a", &agentA, ""); r.status != http.StatusOK || open(qa) || !open(qb) {
		t.Errorf("agent-a naming itself: %d %s; want its own run ended, agent-b's untouched", r.status, r.body)
	}
	if r := e.do("POST", "/v1/runs/shared/end?agent=agent-b", &admin, ""); r.status != http.StatusOK || open(qb) {
		t.Errorf("an admin naming agent-b: %d %s; want agent-b's run ended", r.status, r.body)
	}
}

// TestClientEndsAnotherAgentsRun: the Go client can name the agent whose
// run to end (EndRunOf), as an admin's token may; before, EndRun could
// only end the token's own agent's run, and an admin had to hand-build
// the request. Another agent's token naming it is refused with the
// server's 403, and EndRun still ends the token's own.
func TestClientEndsAnotherAgentsRun(t *testing.T) {
	e := newEnv(t)
	qa, qb := e.ask(agentA, "run-c"), e.ask(agentB, "run-c")
	open := func(id core.QuestionID) bool {
		t.Helper()
		q, err := e.svc.Get(e.ctx(), id)
		if err != nil {
			t.Fatal(err)
		}
		return q.Open()
	}
	var ce *client.Error
	if _, err := e.as(agentA).EndRunOf(e.ctx(), "agent-b", "run-c"); !errors.As(err, &ce) || ce.Status != http.StatusForbidden {
		t.Errorf("agent-a ending agent-b's run: %v; want a 403", err)
	}
	if !open(qa) || !open(qb) {
		t.Fatalf("after the refused end, agent-a's open: %v, agent-b's: %v; want both", open(qa), open(qb))
	}
	res, err := e.as(admin).EndRunOf(e.ctx(), "agent-b", "run-c")
	if err != nil || len(res.Expired) != 1 || res.Expired[0] != qb || open(qb) || !open(qa) {
		t.Errorf("an admin ending agent-b's run: %+v, %v; want %s expired and agent-a's open", res, err, qb)
	}
	if res, err := e.as(agentA).EndRun(e.ctx(), "run-c"); err != nil || len(res.Expired) != 1 || res.Expired[0] != qa {
		t.Errorf("agent-a ending its own run: %+v, %v; want %s expired", res, err, qa)
	}
}

// TestEndRunEmptyAgentIsRefused: ?agent= given with no name is refused
// (400 naming agent) and ends nothing. Before, an empty name read as no
// name, and the caller's own run of that name ended with a 200: a client
// that meant to name an agent and lost the name on the way ended a run
// it never meant to. Left out altogether, the caller's own run ends.
func TestEndRunEmptyAgentIsRefused(t *testing.T) {
	e := newEnv(t)
	e.ask(agentA, "run-e")
	e.ask(admin, "run-e")
	for _, c := range []struct {
		path string
		tok  *httpapi.Token
	}{
		{"/v1/runs/run-e/end?agent=", &agentA},
		{"/v1/runs/run-e/end?agent", &agentA},
		{"/v1/runs/run-e/end?agent=", &admin},
	} {
		before := snapshot(t, e.store)
		r := e.do("POST", c.path, c.tok, "")
		if r.status != http.StatusBadRequest || errorOf(t, r).Code != core.CodeInvalid || !strings.Contains(errorOf(t, r).Message, `"agent"`) {
			t.Errorf("%s as %s: %d %s; want a 400 naming agent", c.path, c.tok.Name, r.status, r.body)
		}
		if d := cmp.Diff(before, snapshot(t, e.store)); d != "" {
			t.Errorf("%s as %s changed the store (-before +after):\n%s", c.path, c.tok.Name, d)
		}
	}
	if r := e.do("POST", "/v1/runs/run-e/end", &agentA, ""); r.status != http.StatusOK || !strings.Contains(string(r.body), `"expired":["`) {
		t.Errorf("agent-a ending its own run with no agent=: %d %s; want its question expired", r.status, r.body)
	}
}

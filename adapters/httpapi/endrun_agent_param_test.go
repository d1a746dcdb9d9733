package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi"
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

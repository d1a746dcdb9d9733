package httpapi_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestTheHostDoorIsTheAskersOwnForAnAdminToo: the MCP door is the host of
// the agent that asked, for an admin's token as for an agent's. Another
// agent's question reads as an unknown id on each of the door's routes,
// and the admin's host answer and decline leave it as they found it, as
// /mcp (mcp.ServiceBackend, which knows an admin's token by its agent
// name alone) refuses them. Before, an admin's token answered any
// agent's question as {mcp, <admin>} wherever a route listed it under
// mcp ("*" does), which /mcp refused and the README ("for their own
// questions only") rules out. Its own questions it answers as before.
func TestTheHostDoorIsTheAskersOwnForAnAdminToo(t *testing.T) {
	e := newEnvOn(t, coretest.OpenStore(t), withDeclines)
	ctx := e.ctx()
	theirs := e.ask(agentA, "run-door")
	const key = "askbridge-host-answer-0123456789abcdef0123"
	door := func(id core.QuestionID) map[string][3]string {
		p := "/v1/questions/" + string(id) + "/mcp"
		return map[string][3]string{
			"door":     {http.MethodGet, p, ""},
			"answer":   {http.MethodPost, p + "/answer", `{"answer":"from the admin's host"}`},
			"decline":  {http.MethodPost, p + "/decline", `{"key":"` + key + `"}`},
			"declined": {http.MethodGet, p + "/decline?key=" + key, ""},
		}
	}
	for name, u := range door(core.NewID(0)) {
		want := e.do(u[0], u[1], &admin, u[2], "Content-Type", "application/json")
		if want.status != http.StatusNotFound {
			t.Fatalf("%s of an unknown id as admin: %d %s, want 404", name, want.status, want.body)
		}
		o := door(theirs)[name]
		if got := e.do(o[0], o[1], &admin, o[2], "Content-Type", "application/json"); got.status != want.status || !bytes.Equal(got.body, want.body) {
			t.Errorf("%s of agent-a's question as admin: %d %s; an unknown id's: %d %s", name, got.status, got.body, want.status, want.body)
		}
	}
	if q, err := e.svc.Get(ctx, theirs); err != nil || !q.Open() {
		t.Fatalf("after the admin's host answer agent-a's question is %+v, %v; want it open", q, err)
	}
	if declined, err := (mcp.ServiceBackend{Svc: e.svc, Agent: agentA.Agent()}).HostFormDeclined(ctx, theirs, key); err != nil || declined {
		t.Errorf("agent-a's form declined by the admin's host: %v, %v; want nothing kept", declined, err)
	}
	// /mcp says the same to the same token.
	err := (mcp.ServiceBackend{Svc: e.svc, Agent: admin.Agent()}).AnswerInHost(ctx, core.AnswerInput{QuestionID: theirs, Text: "x"})
	if core.ErrorCode(err) != core.CodeNotFound {
		t.Fatalf("/mcp's host answer as admin: %v, want not found", err)
	}

	mine := e.ask(admin, "run-door")
	if d, err := e.as(admin).MCPDoor(ctx, mine); err != nil || !d.MayAnswer {
		t.Fatalf("the door on the admin's own question: %+v, %v", d, err)
	}
	if out, err := e.as(admin).AnswerInHost(ctx, mine, client.MCPAnswerRequest{Answer: "mine"}); err != nil || !out.Closed {
		t.Fatalf("the admin's host answer on its own question: %+v, %v", out, err)
	}
	if q, err := e.svc.Get(ctx, mine); err != nil || q.Resolution == nil ||
		q.Resolution.Decider.Surface != core.SurfaceMCP || q.Resolution.Decider.ID != admin.Name {
		t.Fatalf("the admin's own question closed as %+v, %v; want by mcp %s", q, err, admin.Name)
	}
}

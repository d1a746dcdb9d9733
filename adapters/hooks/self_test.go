package hooks_test

import (
	"testing"

	"github.com/askbridge/askbridge/core"
)

// TestHostPromptNotAnsweredByItsOwnAgent: a host's permission prompt, on
// a route that lets the agent's MCP host answer its questions, cannot be
// answered through the MCP door as that agent: the model, holding the
// agent's token, could otherwise approve its own call. Before, it could.
func TestHostPromptNotAnsweredByItsOwnAgent(t *testing.T) {
	d := newDoorOn(t, map[string]core.Route{core.DefaultRoute: {
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}, core.SurfaceMCP: {string(agent)}}}})
	svc := d.svc

	p := d.start(t.Context(), "/v1/hooks/claude-code", hookFixture(t, "claude-code/permission-request.bash.json"))
	defer p.resp.Body.Close()
	q, err := svc.Get(t.Context(), p.id)
	if err != nil || !q.HostPrompt {
		t.Fatalf("the prompt's question: %+v, %v; want it marked as a host's prompt", q, err)
	}
	self := core.Decider{Surface: core.SurfaceMCP, ID: string(agent)}
	if svc.MayAnswer(q, self) {
		t.Error("the agent's MCP host may answer its own host's prompt")
	}
	if _, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: self, OptionID: core.ApproveOption}); core.ErrorCode(err) != core.CodeForbidden {
		t.Errorf("the agent approving its own prompt through the MCP door: %v, want forbidden", err)
	}
	if !svc.MayAnswer(q, core.Decider{Surface: core.SurfaceAPI, ID: "ops"}) {
		t.Error("a person on the route may not answer the prompt")
	}
}

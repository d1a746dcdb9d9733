package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// TestPolicyRulesOverTheAPI: an approval a route's rule decides comes
// back from the ask already closed, and the wait returns at once with a
// resume that says a policy rule decided and nobody looked; the agent's
// view says closed_by "policy" and nothing more of the rule.
func TestPolicyRulesOverTheAPI(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		tool     string
		approved bool
		lines    []string
	}{
		{"fetch", false, []string{"The policy rule denied the gated tool call: do not make it.",
			"The rule's reason, as the server's operator wrote it, follows:"}},
		{"read_file", true, []string{"The policy rule allowed the gated tool call; no human approved it."}},
	} {
		q, err := e.as(agentA).Ask(e.ctx(), client.AskRequest{Kind: core.KindApproval, Question: "Go?", Reversibility: core.Reversible,
			RunID: "run-1", ToolCallID: "call-" + c.tool, Route: "guarded", Tool: c.tool, Arguments: json.RawMessage(`{"x":1}`)})
		if err != nil {
			t.Fatalf("%s: ask: %v", c.tool, err)
		}
		if q.State != core.StateAnswered || q.Resolution == nil || q.Resolution.ClosedBy != core.CloserPolicy ||
			q.Resolution.Approved == nil || *q.Resolution.Approved != c.approved || q.Resolution.Surface != core.SurfaceSystem {
			t.Fatalf("%s: the ask came back %s with %+v", c.tool, q.State, q.Resolution)
		}
		w, err := e.as(agentA).WaitOnce(e.ctx(), q.ID, 0)
		if err != nil {
			t.Fatalf("%s: wait: %v", c.tool, err)
		}
		if w.Resume == nil {
			t.Fatalf("%s: no resume", c.tool)
		}
		p, err := fence.ParseResume(w.Resume.Text)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(p.Lines, "\n")
		for _, l := range append(c.lines, "A policy rule of this server decided this question at once, when it was asked; no human looked at this call.") {
			if !strings.Contains(text, l) {
				t.Errorf("%s: the resume lacks %q:\n%s", c.tool, l, w.Resume.Text)
			}
		}
		if w.Resume.Structured.Approved == nil || *w.Resume.Structured.Approved != c.approved {
			t.Errorf("%s: structured approved %v", c.tool, w.Resume.Structured.Approved)
		}
	}
}

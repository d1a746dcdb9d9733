package core_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestAStandingRefusalSaysItsCause: an approve asking a standing approval
// the question does not offer is refused naming the one cause that holds:
// a quorum, a call not marked reversible, or a route that forbids them,
// for a single call and for a batch's call alike. Before, each was told
// "it is hard to reverse, or its route forbids them", which on a quorum
// is neither.
func TestAStandingRefusalSaysItsCause(t *testing.T) {
	routes := coretest.APIRoutes()
	r := routes[core.DefaultRoute]
	r.MaxQuorum = 3
	routes[core.DefaultRoute] = r
	routes["nostanding"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}, Standing: new(bool)}
	svc, _ := coretest.Open(t, coretest.Options{Routes: routes})
	bob := core.Decider{Surface: core.SurfaceAPI, ID: "bob", Name: "bob"}
	run := core.StandingRequest{Scope: core.StandingRun}
	for _, c := range []struct {
		name      string
		in        core.AskInput
		batch     bool
		want, not []string
	}{
		{"a quorum", core.AskInput{Quorum: 2, Reversibility: core.Reversible}, false,
			[]string{"needs 2 people"}, []string{"reverse", "route"}},
		{"a hard-to-reverse call", core.AskInput{Reversibility: core.HardToReverse}, false,
			[]string{"not marked reversible"}, []string{"people", "route"}},
		{"a route that forbids them", core.AskInput{Route: "nostanding", Reversibility: core.Reversible}, false,
			[]string{"route forbids"}, []string{"people", "reverse"}},
		{"a hard-to-reverse batch", core.AskInput{Reversibility: core.HardToReverse}, true,
			[]string{"not marked reversible"}, []string{"people", "route"}},
		{"a batch on a route that forbids them", core.AskInput{Route: "nostanding", Reversibility: core.Reversible}, true,
			[]string{"route forbids"}, []string{"people", "reverse"}},
	} {
		in := c.in
		in.Kind, in.Agent, in.RunID, in.Text = core.KindApproval, "agent-a", core.RunID("run-"+c.name), "Run?"
		answer := core.AnswerInput{Decider: bob, OptionID: core.ApproveOption, Standing: &run}
		if c.batch {
			in.Calls = []core.CallInput{{ToolCallID: "a", Tool: "bash", Arguments: []byte(`{}`)}, {ToolCallID: "b", Tool: "bash", Arguments: []byte(`{}`)}}
			answer.OptionID, answer.Standing = "", nil
			answer.Calls = []core.CallDecision{{ToolCallID: "a", OptionID: core.ApproveOption, Standing: &run}}
		} else {
			in.Tool, in.Arguments = "bash", []byte(`{}`)
		}
		q, err := svc.Ask(t.Context(), in)
		if err != nil {
			t.Fatalf("%s: ask: %v", c.name, err)
		}
		answer.QuestionID = q.ID
		_, err = svc.Answer(t.Context(), answer)
		msg := core.ErrorMessage(err)
		if core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("%s: %v, want invalid", c.name, err)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q does not say %q", c.name, msg, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(msg, n) {
				t.Errorf("%s: %q says %q, not its cause", c.name, msg, n)
			}
		}
	}
}

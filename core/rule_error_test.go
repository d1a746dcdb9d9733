package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestABrokenRuleLetsNoStandingApprovalThrough: a rule that cannot be
// evaluated for an ask (here a key the arguments lack) stops the rules,
// and the call goes to a person: no standing approval covers it, since
// the rules after the broken one (a deny among them) never ran. Before,
// the standing approval closed it as approved, nobody asked. A number
// JSON can carry and a float64 cannot, which stopped every rule the same
// way, is now refused at the ask (argument_checks_test.go).
func TestABrokenRuleLetsNoStandingApprovalThrough(t *testing.T) {
	routes := coretest.APIRoutes()
	r := routes[core.DefaultRoute]
	r.Rules = []core.Rule{{When: `tool == "shell" && args.command.contains("rm")`, Decide: core.DecideDeny}}
	routes[core.DefaultRoute] = r
	svc, err := core.New(coretest.OpenStore(t), core.Config{Routes: routes, ActorKey: []byte("k")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ask := func(id, args string) *core.Question {
		t.Helper()
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", ToolCallID: id, Text: "Run it?",
			Reversibility: core.Reversible, Tool: "shell", Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("ask %s: %v", args, err)
		}
		return q
	}
	first := ask("t1", `{"command":"ls"}`)
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: first.ID, Decider: ops, OptionID: core.ApproveOption,
		Standing: &core.StandingRequest{Scope: core.StandingRun}}); err != nil {
		t.Fatal(err)
	}
	if q := ask("t2", `{"cmd":"rm -rf ~"}`); !q.Open() {
		t.Errorf("closed %+v by %s; want it asked of a person", q.Resolution, core.CloserOf(q))
	}
	if q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", ToolCallID: "t3", Text: "Run it?",
		Reversibility: core.Reversible, Tool: "shell", Arguments: json.RawMessage(`{"command":"rm -rf ~","pad":1e400}`)}); core.ErrorCode(err) != core.CodeInvalid {
		t.Errorf("a number beyond a float64: %+v, %v; want the ask refused", q, err)
	}
	// In a batch, the call the broken rule stopped at waits for a person;
	// the standing approval covers the other.
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", Text: "Run both?",
		Reversibility: core.Reversible, Calls: []core.CallInput{
			{ToolCallID: "b1", Tool: "shell", Arguments: json.RawMessage(`{"cmd":"rm -rf ~"}`)},
			{ToolCallID: "b2", Tool: "shell", Arguments: json.RawMessage(`{"command":"ls"}`)},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if left := q.UndecidedCalls(); len(left) != 1 || left[0].ToolCallID != "b1" {
		t.Errorf("the batch's undecided calls: %+v; want b1 alone", left)
	}
}

// lostGrantReply is a store whose standing approvals are written but
// whose writes report failure, as a Redis transaction whose reply was
// lost, or whose replicas' acknowledgement timed out, does.
type lostGrantReply struct{ core.Store }

func (s lostGrantReply) PutStanding(ctx context.Context, st core.Standing) error {
	if err := s.Store.PutStanding(ctx, st); err != nil {
		return err
	}
	return errors.New("lostGrantReply: the reply was lost")
}

// TestAStandingApprovalNotConfirmedIsNotLeftLive: a standing approval
// whose write reports failure is taken back, so what stands is what the
// approver was told (only the approve counted) and the log says (no
// grant). Before, the write had landed all the same: the agent's next
// calls were approved, nobody asked, by a standing approval never
// announced and never logged as granted.
func TestAStandingApprovalNotConfirmedIsNotLeftLive(t *testing.T) {
	st := lostGrantReply{coretest.OpenStore(t)}
	svc, err := core.New(st, core.Config{Routes: coretest.APIRoutes(), ActorKey: []byte("k")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ask := func(id string) *core.Question {
		t.Helper()
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", ToolCallID: id, Text: "Run it?",
			Reversibility: core.Reversible, Tool: "shell", Arguments: json.RawMessage(`{"command":"ls"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	o, err := svc.Answer(ctx, core.AnswerInput{QuestionID: ask("t1").ID, Decider: ops, OptionID: core.ApproveOption,
		Standing: &core.StandingRequest{Scope: core.StandingRun}})
	if err != nil || !o.Closed || o.Standing != nil {
		t.Fatalf("the approve: %+v, %v; want it recorded and no standing approval said to be granted", o, err)
	}
	// The note the approver is sent says so too; it said the tool's
	// later calls were approved at once.
	if note := card.RecordedNote(o.Question, core.Ref{QuestionID: o.Question.ID, Item: -1, Action: core.RefStanding}); strings.Contains(note, "approved at once") || !strings.Contains(note, "Approved") {
		t.Fatalf("the approver was told %q", note)
	}
	if live, err := st.ListStandings(ctx, time.Now()); err != nil || len(live) != 0 {
		t.Fatalf("standing approvals live: %+v, %v; want none", live, err)
	}
	if q := ask("t2"); !q.Open() {
		t.Fatalf("the next call was closed by %s; want it asked of a person", core.CloserOf(q))
	}
}

// TestALaterDenyStillDeniesPastABrokenRule: a rule that cannot be
// evaluated (a key the arguments lack, or a condition past its cost
// limit, which an agent can reach by padding its arguments) does not
// skip a later deny rule that matches: the call is denied, as the
// written rules say. Before, the rules stopped at the broken one and a
// person was asked about a call a rule denies outright. The explanation
// names the broken rule beside the deny, as the asked event does; it
// named the deny alone, as if the rules had run cleanly.
func TestALaterDenyStillDeniesPastABrokenRule(t *testing.T) {
	var safe []string
	for i := range 400 {
		safe = append(safe, fmt.Sprintf("tool%d", i))
	}
	routes := coretest.APIRoutes()
	routes["g"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}, Rules: []core.Rule{
		{Name: "mode", When: `tool == "Bash" && args.mode == "safe"`, Decide: core.DecideAllow},
		{Name: "safe", When: `tool == "Bash" && args.command.matches(` + strconv.Quote(`^(`+strings.Join(safe, "|")+`)( [^;&|]*)?$`) + `)`, Decide: core.DecideAllow},
		{Name: "no-rm", When: `tool == "Bash" && args.command.contains("rm -rf")`, Decide: core.DecideDeny},
	}}
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: routes})
	const denied = `), and a later one decides: policy rule 2 of route "g" ("no-rm") denies it at once, nobody is asked`
	// want is the explanation's start, and end its end when the text
	// between (how a budget ran out) is not the test's to fix.
	for _, c := range []struct {
		name, args, want, end string
	}{
		{"a missing key", `{"command":"rm -rf ~"}`, `a rule could not be evaluated (routes.g.rules[0].when: no such key: mode` + denied, ""},
		{"past the cost limit", `{"mode":"x","command":` + strconv.Quote("rm -rf ~ #"+strings.Repeat("a", 15000)) + `}`,
			`a rule could not be evaluated (routes.g.rules[1].when: `, denied},
		{"no later deny matches", `{"command":"ls"}`, `a rule could not be evaluated, so the rules stopped and the ask is asked as configured: routes.g.rules[0].when: no such key: mode`, ""},
	} {
		in := core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Route: "g", Text: "Run?",
			Reversibility: core.Reversible, Tool: "Bash", Arguments: json.RawMessage(c.args)}
		if err := in.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		v, err := svc.Evaluate(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.Explain(); c.end == "" && got != c.want || !strings.HasPrefix(got, c.want) || !strings.HasSuffix(got, c.end) {
			t.Errorf("%s: %q\nwant %q...%q", c.name, got, c.want, c.end)
		}
	}
}

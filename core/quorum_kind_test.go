package core_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
)

// A quorum counts votes only on the kinds that take votes. A batch is
// decided call by call, by one person each, so it is refused on a route
// that needs two people, and when it asks for a quorum of its own.
func TestABatchTakesNoQuorum(t *testing.T) {
	routes := quorumRoutes(2, 3)
	svc, _ := coretest.Open(t, coretest.Options{Routes: routes})
	// One person decides a batch, so on a route that needs two it is
	// refused, with nothing parked; before, it was parked without the
	// quorum, and batching a call with any other let one person approve
	// it (and grant a standing approval for its tool).
	if q, err := svc.Ask(t.Context(), batchAsk()); core.ErrorCode(err) != core.CodeInvalid || !strings.Contains(core.ErrorMessage(err), "one at a time") {
		t.Fatalf("a batch on a route of quorum 2: %+v, %v; want it refused", q, err)
	}
	if open, _, err := svc.ListOpen(t.Context(), "", 10); err != nil || len(open) != 0 {
		t.Errorf("the refused batch parked %d questions, %v", len(open), err)
	}
	in := batchAsk()
	in.RunID, in.Quorum = "run-2", 2
	if _, err := svc.Ask(t.Context(), in); core.ErrorCode(err) != core.CodeInvalid {
		t.Errorf("a batch asking a quorum of 2: %v, want invalid", err)
	}
	// A single call's approval on the same route still takes it.
	one := core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-3", Text: "Write?", Reversibility: core.Reversible,
		Tool: "write_file", Arguments: []byte(`{"path":"/a"}`)}
	if q, err := svc.Ask(t.Context(), one); err != nil || q.Quorum != 2 {
		t.Errorf("an approval on a route of quorum 2: %+v, %v", q, err)
	}
}

// TestAQuorumTakesNeitherEditNorStandingFromOneVoter: an approval that
// needs two people offers no standing approval and takes no edited
// arguments from a voter, each refused with nothing recorded; before, the
// vote that reached the quorum brought its own edit (arguments only its
// voter approved) and its own standing approval for everyone.
func TestAQuorumTakesNeitherEditNorStandingFromOneVoter(t *testing.T) {
	routes := quorumRoutes(2, 3)
	svc, _ := coretest.Open(t, coretest.Options{Routes: routes})
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", Text: "Pay?",
		Reversibility: core.Reversible, Tool: "pay", Arguments: []byte(`{"amount":10}`), Editable: &core.Editable{Keys: []string{"amount"}}})
	if err != nil || q.Quorum != 2 {
		t.Fatalf("ask: %+v, %v", q, err)
	}
	if q.Call.Standing != nil {
		t.Errorf("an approval needing two people offers a standing approval: %+v", q.Call.Standing)
	}
	bob := core.Decider{Surface: core.SurfaceAPI, ID: "bob", Name: "bob"}
	for name, in := range map[string]core.AnswerInput{
		"edited arguments": {QuestionID: q.ID, Decider: bob, OptionID: core.ApproveOption, Arguments: []byte(`{"amount":10000}`)},
		"standing":         {QuestionID: q.ID, Decider: bob, OptionID: core.ApproveOption, Standing: &core.StandingRequest{Scope: core.StandingRun}},
	} {
		if _, err := svc.Answer(t.Context(), in); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("a vote with %s: %v, want invalid", name, err)
		}
	}
	if got, err := svc.Get(t.Context(), q.ID); err != nil || !got.Open() || len(got.Votes) != 0 {
		t.Fatalf("after the refused votes: %+v, %v", got, err)
	}
}

// TestAStandingApprovalCoversNoQuorum: a standing approval granted on a
// small call does not close a later call of the same tool that a policy
// rule sends to two people; before, it closed it at once, nobody asked.
// Nor may a host be told to stop asking about the tool.
func TestAStandingApprovalCoversNoQuorum(t *testing.T) {
	routes := coretest.APIRoutes()
	r := routes[core.DefaultRoute]
	r.MaxQuorum = 3
	r.Rules = []core.Rule{{When: `tool == "pay" && args.amount > 1000`, Quorum: 2}}
	routes[core.DefaultRoute] = r
	svc, err := core.New(coretest.OpenStore(t), core.Config{Routes: routes, ActorKey: []byte("k")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pay := func(run core.RunID, amount string) *core.Question {
		t.Helper()
		q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: run, Text: "Pay?",
			Reversibility: core.Reversible, Tool: "pay", Arguments: []byte(`{"amount":` + amount + `}`)})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	small := pay("run-1", "10")
	alice := core.Decider{Surface: core.SurfaceAPI, ID: "alice", Name: "alice"}
	o, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: small.ID, Decider: alice, OptionID: core.ApproveOption,
		Standing: &core.StandingRequest{Scope: core.StandingRun}})
	if err != nil || o.Standing == nil {
		t.Fatalf("approve and don't ask again: %+v, %v", o, err)
	}
	if later := pay("run-1", "20"); later.Open() {
		t.Fatal("the standing approval did not cover a later small call: the test tests nothing")
	}
	if big := pay("run-1", "5000"); !big.Open() || big.Quorum != 2 {
		t.Fatalf("a call that needs two people, under a standing approval: %s, quorum %d; want it open", big.State, big.Quorum)
	}
	if svc.EveryCallCovered(core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", Tool: "pay", Reversibility: core.Reversible}) {
		t.Error("a host may be told to stop asking about a tool some of whose calls need two people")
	}
}

// TestAVoteBeforeAReloadStillCounts: a vote cast from an account that a
// reload then ties to a person counts as that person's: the person voting
// again from another surface is told it already counted. Before, the
// stored vote kept its account's key, and the person's second vote
// counted too, closing a quorum of two alone.
func TestAVoteBeforeAReloadStillCounts(t *testing.T) {
	route := core.Route{Quorum: 2, MaxQuorum: 2, Deciders: map[core.Surface][]string{
		core.SurfaceSlack: {"*"}, core.SurfaceTelegram: {"*"}}}
	cfg := func(aliceSlack ...string) core.Config {
		ids := map[core.Surface][]string{core.SurfaceTelegram: {"T1"}}
		if len(aliceSlack) > 0 {
			ids[core.SurfaceSlack] = aliceSlack
		}
		return core.Config{ActorKey: []byte("k"), Routes: map[string]core.Route{core.DefaultRoute: route},
			People: map[string]core.Person{"alice": {IDs: ids}}}
	}
	svc, err := core.New(coretest.OpenStore(t), cfg(), nil)
	if err != nil {
		t.Fatal(err)
	}
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Text: "Go?",
		Reversibility: core.Reversible, Tool: "deploy", Arguments: []byte(`{}`)})
	if err != nil || q.Quorum != 2 {
		t.Fatalf("ask: %+v, %v", q, err)
	}
	vote := func(d core.Decider) error {
		_, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: d, OptionID: core.ApproveOption})
		return err
	}
	if err := vote(core.Decider{Surface: core.SurfaceSlack, ID: "U1", Name: "alice"}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Reconfigure(cfg("U1")); err != nil { // U1 is now alice's
		t.Fatal(err)
	}
	if err := vote(core.Decider{Surface: core.SurfaceTelegram, ID: "T1", Name: "alice"}); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("alice voting again from Telegram: %v, want already counted", err)
	}
	if got, err := svc.Get(t.Context(), q.ID); err != nil || !got.Open() || len(got.Votes) != 1 {
		t.Fatalf("after alice's second vote: %+v, %v; want it open with one vote", got, err)
	}
}

// quorumRoutes are the API's routes, the default one needing quorum
// people and allowing asks of up to most.
func quorumRoutes(quorum, most int) map[string]core.Route {
	routes := coretest.APIRoutes()
	r := routes[core.DefaultRoute]
	r.Quorum, r.MaxQuorum = quorum, most
	routes[core.DefaultRoute] = r
	return routes
}

// TestARenamedPersonVotesOnce: a vote counts as its account's as well as
// its person's, so a person a reload renamed (their vote keyed by the
// old name) voting again from another account, or another person a
// reload gave the same account, is told it already counted. Before, the
// renamed person's second vote closed a quorum of two alone.
func TestARenamedPersonVotesOnce(t *testing.T) {
	route := core.Route{Quorum: 2, MaxQuorum: 2, Deciders: map[core.Surface][]string{
		core.SurfaceSlack: {"*"}, core.SurfaceTelegram: {"*"}}}
	cfg := func(name string) core.Config {
		return core.Config{ActorKey: []byte("k"), Routes: map[string]core.Route{core.DefaultRoute: route},
			People: map[string]core.Person{name: {IDs: map[core.Surface][]string{core.SurfaceSlack: {"U1"}, core.SurfaceTelegram: {"T1"}}}}}
	}
	svc, err := core.New(coretest.OpenStore(t), cfg("alice"), nil)
	if err != nil {
		t.Fatal(err)
	}
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Text: "Go?",
		Reversibility: core.Reversible, Tool: "deploy", Arguments: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	vote := func(d core.Decider) error {
		_, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: d, OptionID: core.ApproveOption})
		return err
	}
	if err := vote(core.Decider{Surface: core.SurfaceSlack, ID: "U1"}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Reconfigure(cfg("asmith")); err != nil { // alice is asmith now
		t.Fatal(err)
	}
	if err := vote(core.Decider{Surface: core.SurfaceTelegram, ID: "T1"}); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("the renamed person voting again from Telegram: %v, want already counted", err)
	}
	if got, err := svc.Get(t.Context(), q.ID); err != nil || !got.Open() || len(got.Votes) != 1 {
		t.Fatalf("after the second vote: %+v, %v; want it open with one vote", got, err)
	}
}

// TestAnMCPHostCastsNoVote: on a question that needs several people, the
// agent's MCP host may not vote, though the route lists the agent under
// mcp: a quorum counts different people, and the host is no one askbridge
// can tell apart (the agent's own token acts there, and the person at the
// keyboard may vote again from chat). Before, the host's vote counted,
// and one person and the agent closed a quorum of two. A question of one
// decider still takes the host's answer.
func TestAnMCPHostCastsNoVote(t *testing.T) {
	host := core.Decider{Surface: core.SurfaceMCP, ID: "agent-a"}
	routes := map[string]core.Route{core.DefaultRoute: {
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}, core.SurfaceMCP: {"agent-a"}}, Quorum: 2}}
	svc, _ := coretest.Open(t, coretest.Options{Routes: routes})
	ctx := t.Context()
	ask := func(run core.RunID, quorum int) *core.Question {
		t.Helper()
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: run, Text: "Deploy?", Reversibility: core.Reversible,
			Tool: "deploy", Arguments: []byte(`{"env":"prod"}`), Quorum: quorum})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	q := ask("run-1", 0)
	if q.Quorum != 2 || svc.MayAnswer(q, host) {
		t.Fatalf("quorum %d; the host may vote: %v; want a quorum of 2 the host may not vote on", q.Quorum, svc.MayAnswer(q, host))
	}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: host, OptionID: core.ApproveOption}); core.ErrorCode(err) != core.CodeForbidden {
		t.Fatalf("the host's vote: %v; want it refused", err)
	}
	if got, _ := svc.Get(ctx, q.ID); len(got.Votes) != 0 || !got.Open() {
		t.Fatalf("after the host's refused vote: %d votes, %s", len(got.Votes), got.State)
	}
	routes[core.DefaultRoute] = core.Route{Deciders: routes[core.DefaultRoute].Deciders}
	if err := svc.Reconfigure(core.Config{Routes: routes, ActorKey: []byte(coretest.ActorKey)}); err != nil {
		t.Fatal(err)
	}
	one := ask("run-2", 0)
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: one.ID, Decider: host, OptionID: core.ApproveOption}); err != nil {
		t.Fatalf("the host's answer to a question of one decider: %v", err)
	}
}

// TestOneDeclineDoesNotCloseAQuorum: on a question that needs two people,
// one person's decline is refused with nothing recorded, and its card
// offers no Decline; before, any one decider could close a two-person
// sign-off as declined, and the agent was told to go on by its own
// judgement.
func TestOneDeclineDoesNotCloseAQuorum(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{Routes: quorumRoutes(2, 3)})
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", Text: "Deploy?",
		Reversibility: core.HardToReverse, Tool: "deploy", Arguments: []byte(`{"env":"prod"}`)})
	if err != nil || q.Quorum != 2 {
		t.Fatalf("ask: %+v, %v", q, err)
	}
	if q.Declinable() {
		t.Error("a question needing two people reads as declinable")
	}
	bob := core.Decider{Surface: core.SurfaceAPI, ID: "bob", Name: "bob"}
	if o, err := svc.Decline(t.Context(), q.ID, bob); core.ErrorCode(err) != core.CodeConflict || !strings.Contains(core.ErrorMessage(err), "2 people") {
		t.Fatalf("one decline of a quorum of 2: %+v, %v; want it refused", o, err)
	}
	if got, err := svc.Get(t.Context(), q.ID); err != nil || !got.Open() {
		t.Fatalf("after the refused decline: %+v, %v", got, err)
	}
	for _, a := range card.New(q, core.MessageRef{}).Actions {
		if a.Label == card.LabelDecline {
			t.Errorf("the card of a question needing two people offers %q", a.Label)
		}
	}
	// A question one person decides still offers it.
	one, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: "agent-a", RunID: "run-2", Text: "Which?",
		Reversibility: core.Reversible})
	if err != nil || !one.Declinable() || !slices.ContainsFunc(card.New(one, core.MessageRef{}).Actions, func(a card.Action) bool { return a.Label == card.LabelDecline }) {
		t.Errorf("a clarification: declinable %v, %v", one != nil && one.Declinable(), err)
	}
}

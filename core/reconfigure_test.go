package core_test

import (
	"context"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

func apiRoute(deciders ...string) core.Route {
	return core.Route{Deciders: map[core.Surface][]string{core.SurfaceAPI: deciders}}
}

func reloadConfig(routes map[string]core.Route) core.Config {
	return core.Config{ActorKey: []byte("k"), Routes: routes,
		People: map[string]core.Person{"carol": {IDs: ids("api", "carol-token")}}}
}

// A reload changes the route of new questions; a question parked before
// it keeps the route it was asked under, even once its route is gone.
func TestReconfigureKeepsParkedQuestionsOnTheirRoute(t *testing.T) {
	ctx := context.Background()
	svc, err := core.New(coretest.OpenStore(t), reloadConfig(map[string]core.Route{
		"ops":  {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"alice"}}, People: []string{"person:carol"}},
		"misc": apiRoute("*"),
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(route string) *core.Question {
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "which?",
			Reversibility: core.Reversible, Route: route})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	api := func(id string) core.Decider { return core.Decider{Surface: core.SurfaceAPI, ID: id} }
	parked := ask("ops")

	// ops now goes to bob alone; carol's person entry is gone.
	if err := svc.Reconfigure(reloadConfig(map[string]core.Route{"ops": apiRoute("bob"), "misc": apiRoute("*")})); err != nil {
		t.Fatal(err)
	}
	fresh := ask("ops")
	for _, c := range []struct {
		q    *core.Question
		who  string
		want bool
	}{{parked, "alice", true}, {parked, "carol-token", true}, {parked, "bob", false},
		{fresh, "bob", true}, {fresh, "alice", false}, {fresh, "carol-token", false}} {
		if got := svc.MayAnswer(c.q, api(c.who)); got != c.want {
			t.Errorf("%s may answer the question asked %s the reload: %v, want %v", c.who,
				map[bool]string{true: "before", false: "after"}[c.q == parked], got, c.want)
		}
	}

	// ops is removed: new asks on it are refused, the parked one is still
	// answerable by whom it was asked of (read back from the store).
	if err := svc.Reconfigure(reloadConfig(map[string]core.Route{"misc": apiRoute("*")})); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "?", Reversibility: core.Reversible, Route: "ops"}); core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("ask on a removed route: %v, want invalid", err)
	}
	stored, err := svc.Get(ctx, parked.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := svc.RouteOf(stored); !ok || r.Name != "ops" || len(r.Deciders[core.SurfaceAPI]) != 1 || r.Deciders[core.SurfaceAPI][0] != "alice" {
		t.Fatalf("RouteOf(parked) = %+v, %v; want ops as asked", r, ok)
	}
	out, err := svc.Answer(ctx, core.AnswerInput{QuestionID: parked.ID, Decider: api("alice"), Text: "this one"})
	if err != nil || !out.Closed {
		t.Fatalf("alice's answer on the parked question: %+v, %v", out, err)
	}
}

// A bad configuration is refused whole and the one in force stays; so is
// a change of what only a restart may change.
func TestReconfigureRefusesAndKeepsTheRunningConfiguration(t *testing.T) {
	svc, err := core.New(coretest.OpenStore(t), reloadConfig(map[string]core.Route{"ops": apiRoute("alice")}), nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := reloadConfig(map[string]core.Route{"ops": {EscalateTo: "nowhere"}})
	if err := svc.Reconfigure(bad); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("Reconfigure(escalate_to nowhere) = %v", err)
	}
	resharded := reloadConfig(map[string]core.Route{"ops": apiRoute("bob")})
	resharded.Shards = 4
	if err := svc.Reconfigure(resharded); err == nil || !strings.Contains(err.Error(), "shards") {
		t.Fatalf("Reconfigure(shards 4) = %v", err)
	}
	rekeyed := reloadConfig(map[string]core.Route{"ops": apiRoute("bob")})
	rekeyed.ActorKey = []byte("other")
	if err := svc.Reconfigure(rekeyed); err == nil || !strings.Contains(err.Error(), "actor key") {
		t.Fatalf("Reconfigure(another actor key) = %v", err)
	}
	if r, _ := svc.Route("ops"); r.EscalateTo != "" || r.Deciders[core.SurfaceAPI][0] != "alice" {
		t.Fatalf("a refused configuration changed the route: %+v", r)
	}
}

// BenchmarkRouteOf is the route lookup every answer, card and reminder
// makes: Route (by name, as before questions kept their route) is the
// yardstick; unchanged is a question asked under the route in force,
// reloaded one asked before a reload changed it.
func BenchmarkRouteOf(b *testing.B) {
	routes := map[string]core.Route{"ops": {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"alice"}, core.SurfaceSlack: {"U1", "role:S1"}},
		People: []string{"person:carol"}, RemindEvery: 3600e9, Quorum: 1}}
	svc, err := core.New(coretest.OpenStore(b), reloadConfig(routes), nil)
	if err != nil {
		b.Fatal(err)
	}
	old, err := svc.Ask(context.Background(), core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "?",
		Reversibility: core.Reversible, Route: "ops"})
	if err != nil {
		b.Fatal(err)
	}
	if err := svc.Reconfigure(reloadConfig(map[string]core.Route{"ops": apiRoute("bob")})); err != nil {
		b.Fatal(err)
	}
	fresh, err := svc.Ask(context.Background(), core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "?",
		Reversibility: core.Reversible, Route: "ops"})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Route", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := svc.Route("ops"); !ok {
				b.Fatal("no route")
			}
		}
	})
	for _, c := range []struct {
		name string
		q    *core.Question
	}{{"unchanged", fresh}, {"reloaded", old}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := svc.RouteOf(c.q); !ok {
					b.Fatal("no route")
				}
			}
		})
	}
}

// TestReloadRemovingOnePersonKeepsTheOthers: a reload that removes one
// person a parked question's route named leaves the others able to
// answer; the removed person is no longer anyone. Before, the one unknown
// name emptied the route's people, and nobody could answer.
func TestReloadRemovingOnePersonKeepsTheOthers(t *testing.T) {
	people := func(names ...string) map[string]core.Person {
		out := map[string]core.Person{}
		for _, n := range names {
			out[n] = core.Person{IDs: ids("api", n+"-token")}
		}
		return out
	}
	route := map[string]core.Route{"ops": {People: []string{"person:alice", "person:bob"}}}
	svc, err := core.New(coretest.OpenStore(t), core.Config{ActorKey: []byte("k"), Routes: route, People: people("alice", "bob")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "which?",
		Reversibility: core.Reversible, Route: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Reconfigure(core.Config{ActorKey: []byte("k"), People: people("bob"),
		Routes: map[string]core.Route{"ops": {People: []string{"person:bob"}}}}); err != nil {
		t.Fatal(err)
	}
	api := func(id string) core.Decider { return core.Decider{Surface: core.SurfaceAPI, ID: id} }
	if svc.MayAnswer(q, api("alice-token")) {
		t.Error("alice, removed, may still answer")
	}
	if out, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: api("bob-token"), Text: "this one"}); err != nil || !out.Closed {
		t.Fatalf("bob's answer after alice was removed: %+v, %v", out, err)
	}
}

// TestRepeatAskAfterRulesReload: an agent's repeat of an ask (the same
// tool call, its reply lost) after a reload changed the route's policy
// rules is the same ask: it gets the question it has, still open. Before,
// the repeat was compared as the new rules reshaped it (here: asked as
// hard to reverse), so it was refused as a different body, and an added
// deny rule closed the question people were asked, by a rule that did not
// apply when it was asked.
func TestRepeatAskAfterRulesReload(t *testing.T) {
	ctx := context.Background()
	svc, err := core.New(coretest.OpenStore(t), reloadConfig(map[string]core.Route{core.DefaultRoute: apiRoute("*")}), nil)
	if err != nil {
		t.Fatal(err)
	}
	in := core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", ToolCallID: "toolu_01", Text: "Deploy?",
		Reversibility: core.Reversible, Tool: "deploy", Arguments: []byte(`{"env":"prod"}`)}
	q, err := svc.Ask(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range []core.Rule{
		{Name: "prod", When: `tool == "deploy"`, Reversibility: core.HardToReverse},
		{Name: "no deploys", When: `tool == "deploy"`, Decide: core.DecideDeny, Reason: "Frozen."},
	} {
		route := apiRoute("*")
		route.Rules = []core.Rule{rule}
		if err := svc.Reconfigure(reloadConfig(map[string]core.Route{core.DefaultRoute: route})); err != nil {
			t.Fatal(err)
		}
		again, repeat, err := svc.AskOrRepeat(ctx, in)
		if err != nil || !repeat || again.ID != q.ID {
			t.Fatalf("the repeat after rule %q: %+v, repeat %v, %v; want question %s", rule.Name, again, repeat, err, q.ID)
		}
		if !again.Open() || again.Reversibility != core.Reversible {
			t.Fatalf("the repeat after rule %q changed the question: %s, %s", rule.Name, again.State, again.Reversibility)
		}
	}
}

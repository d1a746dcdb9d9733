package core_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// heavyList is arguments holding a list of n strings, which a condition
// comparing every pair of them walks n² times: 400 costs about 800 000
// of CEL's cost units, 200 about 200 000.
func heavyList(n int) json.RawMessage {
	return json.RawMessage(`{"l":[` + strings.TrimSuffix(strings.Repeat(`"a",`, n), ",") + `]}`)
}

// pairs is a condition walking every pair of args.l, true throughout.
const pairs = `args.l.all(x, args.l.all(y, x != "zz"))`

// askedReason is what the asked event of q records of the rules.
func askedReason(t *testing.T, st coretest.EventReader, q *core.Question) string {
	t.Helper()
	for _, ev := range coretest.EventsOf(t, st, q.ID) {
		if ev.Kind == core.EventAsked {
			return ev.Reason
		}
	}
	t.Fatalf("no asked event for %s", q.ID)
	return ""
}

// TestTheRulesOfOneAskShareABudget: each condition has its own cost
// limit, but a route takes up to 200 rules and a batch 20 calls, so the
// rules of one ask are evaluated within one budget, across its rules,
// its calls and the routes an ask rule sends it to. Past it, the rules
// stop as at a rule that cannot be evaluated: nothing is allowed, a
// later deny still denies (within a reserve kept for it), and the asked
// event says the budget ran out. Before, every rule ran whatever the
// others had cost, so an ask could take the sum of 200 conditions'
// limits, times 20 calls.
func TestTheRulesOfOneAskShareABudget(t *testing.T) {
	api := map[core.Surface][]string{core.SurfaceAPI: {"*"}}
	var heavy []core.Rule
	for i := range 6 {
		heavy = append(heavy, core.Rule{Name: "heavy " + strconv.Itoa(i), When: `!` + pairs, Decide: core.DecideAllow})
	}
	routes := coretest.APIRoutes()
	routes["g"] = core.Route{Deciders: api, Rules: append(heavy, core.Rule{Name: "no t", When: `tool == "t"`, Decide: core.DecideDeny})}
	routes["b"] = core.Route{Deciders: api, Rules: []core.Rule{{Name: "pairs", When: pairs, Decide: core.DecideAllow}}}
	svc, st := coretest.Open(t, coretest.Options{Routes: routes})
	ctx := t.Context()

	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", ToolCallID: "t1", Route: "g", Text: "Run?",
		Reversibility: core.Reversible, Tool: "t", Arguments: heavyList(400)})
	if err != nil {
		t.Fatal(err)
	}
	if q.Open() || q.Rule == nil || q.Rule.Index != 6 {
		t.Errorf("%s, rule %+v; want it denied by rule 6, past the budget", q.State, q.Rule)
	}
	if why := askedReason(t, st, q); !strings.Contains(why, "used up their budget") {
		t.Errorf("the asked event says %q; want it to say the rules' budget ran out", why)
	}

	// A batch's calls share it: the calls past it are asked of a person,
	// none of them allowed.
	var calls []core.CallInput
	for i := range core.MaxBatchCalls {
		calls = append(calls, core.CallInput{ToolCallID: "c" + strconv.Itoa(i), Tool: "t", Arguments: heavyList(200)})
	}
	q, err = svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Route: "b", Text: "Run them?",
		Reversibility: core.Reversible, Calls: calls})
	if err != nil {
		t.Fatal(err)
	}
	left := q.UndecidedCalls()
	if !q.Open() || len(left) == 0 || len(left) == len(calls) {
		t.Errorf("the batch: %s with %d of %d calls left to a person; want the calls past the budget asked, the others allowed",
			q.State, len(left), len(calls))
	}
	if why := askedReason(t, st, q); !strings.Contains(why, "used up their budget") {
		t.Errorf("the batch's asked event says %q; want it to say the rules' budget ran out", why)
	}
}

// TestAPatternIsBoundedBeforeItRuns: a regular expression's work is
// checked before it runs, from the length of the text and the size of
// the compiled pattern, whether the pattern is written in the condition
// or taken from the arguments: past the limit the rule cannot be
// evaluated (so nothing is allowed), at once. Before, CEL counted a
// match's cost after it had run, and from the pattern's length, not its
// size: a pattern the arguments gave ran 1-2 s before the cost limit
// stopped it, and (a?){1000}x, 11 characters compiling to 4000
// instructions, ran a second over 16 KiB and came in far under the
// limit. Patterns as README's starter rules write them still run over
// arguments of any size an ask takes.
func TestAPatternIsBoundedBeforeItRuns(t *testing.T) {
	routes := coretest.APIRoutes()
	routes["g"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}, Rules: []core.Rule{
		{Name: "theirs", When: `tool == "theirs" && args.s.matches(args.p)`, Decide: core.DecideAllow},
		{Name: "ours", When: `tool == "ours" && args.s.matches("(a?){1000}x")`, Decide: core.DecideAllow},
		{Name: "destructive", When: `tool == "Bash" && args.s.matches("\\brm\\b|\\bgit\\b.*\\b(push|reset|clean)\\b|\\|\\s*(ba|z)?sh\\b|\\bterraform\\b.*\\b(apply|destroy)\\b")`, Decide: core.DecideDeny},
	}}
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: routes})
	text := strings.Repeat("a", 16000)
	for _, c := range []struct{ name, tool, args, want string }{
		// CEL prices this one past the cost limit, and says so, but
		// now before it runs (BenchmarkBoundedPatterns times it).
		{"a costly pattern from the arguments", "theirs", `{"s":"` + text[:8000] + `","p":"` + strings.Repeat("a?", 3000) + `x"}`,
			`a rule could not be evaluated, so the rules stopped and the ask is asked as configured: routes.g.rules[0].when: `},
		{"a small pattern of many instructions from the arguments", "theirs", `{"s":"` + text + `","p":"(a?){1000}x"}`,
			`a rule could not be evaluated, so the rules stopped and the ask is asked as configured: routes.g.rules[0].when: matches: `},
		{"the same pattern written in the rule", "ours", `{"s":"` + text + `"}`,
			`a rule could not be evaluated, so the rules stopped and the ask is asked as configured: routes.g.rules[1].when: matches: `},
		{"it over a short text", "ours", `{"s":"aaax"}`, `policy rule 1 of route "g" ("ours") allows it: approved at once, nobody is asked`},
		{"a starter rule's pattern over 16 KiB", "Bash", `{"s":"` + strings.Repeat("git status; ", 1300) + `rm -rf /"}`,
			`policy rule 2 of route "g" ("destructive") denies it at once, nobody is asked`},
	} {
		v, err := svc.Evaluate(core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Route: "g", Text: "Run?",
			Reversibility: core.Reversible, Tool: c.tool, Arguments: json.RawMessage(c.args)})
		if err != nil {
			t.Fatal(err)
		}
		if got := v.Explain(); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q\nwant it to start %q", c.name, got, c.want)
		}
	}
}

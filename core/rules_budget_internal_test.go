package core

import (
	"context"
	"encoding/json"
	"regexp/syntax"
	"strings"
	"testing"
)

// compiled is rule r compiled as a configuration's rules are, for route
// "g".
func compiled(t testing.TB, rules ...Rule) Route {
	t.Helper()
	out, err := CompileRules("g", rules, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return Route{Name: "g", Rules: out}
}

// ruleVars are the variables a rule sees for a call of tool with args.
func ruleVars(t testing.TB, tool, args string) map[string]any {
	t.Helper()
	a, err := ruleArgs(json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"tool": tool, "args": a, "agent": "a", "run": "r", "labels": ruleLabels(Labels{}), "route": "g", "kind": "approval"}
}

// TestAConditionStopsWhenItsTimeIsUp: a condition evaluated under a
// context that is done stops at the next round of a comprehension or the
// next match, with an error, rather than running to its cost limit: so
// the time of an ask's budget holds inside one condition as well as
// between them. Before, the programs were not interruptible: both ran to
// the end, the first to its cost limit.
func TestAConditionStopsWhenItsTimeIsUp(t *testing.T) {
	list := `{"l":[` + strings.TrimSuffix(strings.Repeat(`"a",`, 400), ",") + `],"s":"` + strings.Repeat("a", 3000) + `"}`
	for _, when := range []string{
		`args.l.all(x, args.l.all(y, x != "zz"))`,
		`args.s.matches("b") || args.s.matches("c") || args.s.matches("d")`,
	} {
		route := compiled(t, Rule{When: when, Decide: DecideDeny})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if out, _, err := route.Rules[0].prg.ContextEval(ctx, ruleVars(t, "t", list)); err == nil {
			t.Errorf("%s, its time up: %v, no error; want it stopped", when, out)
		}
	}
}

// TestTheBudgetKeepsAReserveForADeny: once the rules before a broken one
// have spent their share of the budget, the next rule is not evaluated
// (it fails, naming the budget), and a later deny is still evaluated,
// within the quarter of the budget kept for it; once all of it is spent,
// nothing more is evaluated, and the ask is asked as configured.
func TestTheBudgetKeepsAReserveForADeny(t *testing.T) {
	route := compiled(t,
		Rule{Name: "ls", When: `tool == "Bash" && args.command == "ls"`, Decide: DecideAllow},
		Rule{Name: "rm", When: `tool == "Bash" && args.command.contains("rm")`, Decide: DecideDeny})
	in := AskInput{Kind: KindApproval, Tool: "Bash", Arguments: json.RawMessage(`{"command":"rm -rf /"}`)}
	for _, c := range []struct {
		name  string
		spent uint64
		out   bool // the time up, all of it
		rule  int  // -1: none
		err   string
	}{
		{"the main share spent", askRuleCost - askRuleCost/4, false, 1, "routes.g.rules[0].when: not evaluated: the rules of this ask used up their budget of 3000000 in cost"},
		{"all of it spent", askRuleCost, false, -1, "routes.g.rules[0].when: not evaluated: the rules of this ask used up their budget of 3000000 in cost"},
		{"its time up", 0, true, -1, "routes.g.rules[0].when: not evaluated: the rules of this ask used up their budget of 1.5s"},
	} {
		b := newRuleBudget()
		b.spent = c.spent
		if c.out {
			b.cancel()
		}
		v := evalRules(route, in, b)
		b.cancel()
		switch {
		case c.rule < 0 && (v.Rule != nil || v.Err == nil || v.Err.Error() != c.err):
			t.Errorf("%s: rule %+v, error %v; want no rule, and %s", c.name, v.Use, v.Err, c.err)
		case c.rule >= 0 && (v.Rule == nil || v.Use.Index != c.rule || v.passed == nil || v.passed.Error() != c.err):
			t.Errorf("%s: rule %+v past %v; want rule %d past %s", c.name, v.Use, v.passed, c.rule, c.err)
		}
	}
}

// TestEstimateInstsIsNoLessThanCompiled: the estimate a pattern taken at
// the ask is refused by, before it is compiled, is never below what it
// compiles to, so no pattern slips under matchSteps by it.
func TestEstimateInstsIsNoLessThanCompiled(t *testing.T) {
	for _, p := range []string{
		"a", "(a?){1000}x", "a{3,7}", "(ab|cd)+e*", "[a-z]{2,}", "(?i)password|secret|api[_-]?key", "^$", "x{0}", "((a|b){2,5}c?){3}",
		"\\brm\\b|\\bgit\\b.*\\b(push|reset|clean)\\b|\\|\\s*(ba|z)?sh\\b|\\bterraform\\b.*\\b(apply|destroy)\\b",
	} {
		parsed, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		_, insts, err := compilePattern(p)
		if err != nil {
			t.Fatal(err)
		}
		if est := 4 + estimateInsts(parsed); est < insts {
			t.Errorf("%s: estimated %d instructions, compiled to %d", p, est, insts)
		}
	}
}

// BenchmarkRulesOfOneAsk: the rules of one ask as README's starter rules
// see a batch of 20 calls near the largest arguments an ask takes, and as
// 200 rules at their cost limit would, which the budget cuts short (the
// cost spent is reported per ask).
func BenchmarkRulesOfOneAsk(b *testing.B) {
	starter := []Rule{
		{Name: "reads", When: `tool == "Read" || tool == "Grep" || tool == "Glob"`, Decide: DecideAllow},
		{Name: "destructive", When: `tool == "Bash" && args.command.matches("\\brm\\b|\\bgit\\b.*\\b(push|reset|clean)\\b|\\|\\s*(ba|z)?sh\\b|\\bterraform\\b.*\\b(apply|destroy)\\b")`,
			Reversibility: HardToReverse},
		{Name: "look", When: "tool == \"Bash\" && args.command.matches(\"^(ls|cat|head|tail|wc|grep)( [^;&|<>$`\\\\\\\\(){}\\\\n]*)?$\")", Reversibility: Reversible},
		{When: `tool == "WebFetch"`, Decide: DecideDeny},
	}
	var heavy []Rule
	for range MaxRules {
		heavy = append(heavy, Rule{When: `!args.l.all(x, args.l.all(y, x != "zz"))`, Decide: DecideAllow})
	}
	command := `{"command":"ls ` + strings.Repeat("build/output-file ", 880) + `"}`
	var calls []CallInput
	for range MaxBatchCalls {
		calls = append(calls, CallInput{ToolCallID: "c", Tool: "Bash", Arguments: json.RawMessage(command)})
	}
	for name, c := range map[string]struct {
		rules []Rule
		in    AskInput
	}{
		"starter rules, 20 calls of 16KiB": {starter, AskInput{Kind: KindApproval, Calls: calls}},
		"200 rules at their limit":         {heavy, AskInput{Kind: KindApproval, Tool: "t", Arguments: json.RawMessage(`{"l":[` + strings.TrimSuffix(strings.Repeat(`"a",`, 400), ",") + `]}`)}},
	} {
		route := compiled(b, c.rules...)
		b.Run(name, func(b *testing.B) {
			var spent uint64
			for b.Loop() {
				budget := newRuleBudget()
				if c.in.Calls == nil {
					evalRules(route, c.in, budget)
				}
				for _, call := range c.in.Calls {
					evalRules(route, AskInput{Kind: KindApproval, Tool: call.Tool, Arguments: call.Arguments}, budget)
				}
				budget.cancel()
				spent = budget.spent
			}
			b.ReportMetric(float64(spent), "cost/ask")
		})
	}
}

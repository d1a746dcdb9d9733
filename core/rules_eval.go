package core

import (
	"encoding/json"
	"strconv"
)

// RuleVerdict is how a route's rules decide one ask: the rule that
// matched (Rule nil when none did), or the error that stopped them.
type RuleVerdict struct {
	Rule *Rule
	Use  RuleUse
	// Err is a condition that could not be evaluated; the rules stopped
	// there, and the ask is asked of a person: as configured, or as the
	// later ask rule that matched (Rule, set with Err) shapes it.
	Err *RuleError
	// passed is the condition that could not be evaluated before the
	// deny (Rule) that decided all the same: Err stays nil, as the call
	// is denied rather than asked, but the asked event names it
	// (askedReason), as it names any rule that failed.
	passed *RuleError
	// hops, for an ask an ask rule sent to another route, are the
	// verdicts of the rules of each route it met, in order, the first
	// the route asked on (rules_reroute.go); on is a hop's route.
	hops []RuleVerdict
	on   string
}

// ruleApplies reports whether rules see in at all: approvals of one tool
// call.
func ruleApplies(in AskInput) bool {
	return in.Kind == KindApproval && len(in.Calls) == 0
}

// evalRules runs route's rules over in within b, first match wins; past
// a rule that cannot be evaluated (or that b leaves no room for), a
// later deny that matches still decides, and else a later ask rule that
// matches still shapes the ask (pastBroken).
func evalRules(route Route, in AskInput, b *ruleBudget) RuleVerdict {
	if len(route.Rules) == 0 || !ruleApplies(in) {
		return RuleVerdict{}
	}
	var args any = map[string]any{}
	if len(in.Arguments) > 0 {
		var err error
		if args, err = ruleArgs(in.Arguments); err != nil {
			return RuleVerdict{Err: &RuleError{Route: route.Name, Field: "when", Msg: "the arguments cannot be read: " + ErrorMessage(err)}}
		}
	}
	vars := map[string]any{
		"tool": in.Tool, "args": args, "agent": in.Agent, "run": in.RunID,
		"labels": ruleLabels(in.Labels),
		"route":  route.Name, "kind": string(in.Kind),
	}
	for i := range route.Rules {
		r := &route.Rules[i]
		if r.prg == nil {
			return RuleVerdict{Err: &RuleError{Route: route.Name, Index: i, Field: "when", Msg: "not compiled"}}
		}
		ok, err := b.match(r, vars, false)
		if err != nil {
			// A rule that cannot be evaluated never lets a later deny or
			// ask rule be skipped: an agent that pads its arguments past
			// an earlier rule's cost limit, or leaves out the key it
			// reads, must not turn an outright deny into a person's
			// question, nor a question for two leads into one for anyone
			// on the route.
			return pastBroken(route, i+1, vars, b, &RuleError{Route: route.Name, Index: i, Field: "when", Msg: err.Error()})
		}
		if ok {
			return RuleVerdict{Rule: r, Use: RuleUse{Route: route.Name, Index: i, Name: r.Name, Decide: r.Decide}}
		}
	}
	return RuleVerdict{}
}

// ruleLabels is the labels as the rules read them: "project" and "task",
// and no other key (a condition reading another fails).
func ruleLabels(l Labels) map[string]string {
	return map[string]string{"project": l.Project, "task": l.Task}
}

// pastBroken is what the rules from rule from on still decide after an
// earlier one failed with broken: the first deny that matches, else the
// first ask rule that matches, which shapes the ask as it would have
// (Err stays set, so no standing approval covers it), else nothing but
// broken. No allow decides: the broken rule might have denied the call,
// or asked it more strictly. A rule that cannot be evaluated is passed.
// They are evaluated within b's reserve (ruleBudget).
func pastBroken(route Route, from int, vars map[string]any, b *ruleBudget, broken *RuleError) RuleVerdict {
	out := RuleVerdict{Err: broken}
	for i := from; i < len(route.Rules); i++ {
		r := &route.Rules[i]
		if r.Decide == DecideAllow || r.Decide == DecideAsk && out.Rule != nil || r.prg == nil {
			continue
		}
		if ok, err := b.match(r, vars, true); err != nil || !ok {
			continue
		}
		use := RuleUse{Route: route.Name, Index: i, Name: r.Name, Decide: r.Decide}
		if r.Decide == DecideDeny {
			return RuleVerdict{Rule: r, Use: use, passed: broken}
		}
		out.Rule, out.Use = r, use
	}
	return out
}

// ruleArgs decodes a call's arguments as the rules read them: numbers as
// float64. It decodes them as CanonicalArguments does (argumentsValue),
// so the rules fail to read only what every ask refuses: arguments an ask
// takes never stop the rules before a deny could run.
func ruleArgs(raw json.RawMessage) (any, error) {
	v, err := argumentsValue(raw)
	if err != nil {
		return nil, err
	}
	return floats(v), nil
}

// floats turns the json.Numbers of v, which argumentsValue has checked
// fit a float64, into float64s, in place, as encoding/json decodes them.
func floats(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, _ := strconv.ParseFloat(string(v), 64)
		return f
	case []any:
		for i, e := range v {
			v[i] = floats(e)
		}
	case map[string]any:
		for k, e := range v {
			v[k] = floats(e)
		}
	}
	return v
}

// Explain words a verdict for people trying rules (askbridge policy
// test): of each route's rules the ask met, when an ask rule sent it on.
func (v RuleVerdict) Explain() string {
	if len(v.hops) > 0 {
		return v.hops[0].Explain() + v.rerouted(false)
	}
	switch {
	case v.Err != nil && v.Rule != nil:
		return "a rule could not be evaluated, so no later rule may allow it and no standing approval covers it (" + v.Err.Error() + "); " + v.Rule.shapeReason(v.Use)
	case v.Err != nil:
		return "a rule could not be evaluated, so the rules stopped and the ask is asked as configured: " + v.Err.Error()
	case v.Rule == nil:
		return "no rule matches: asked as configured"
	}
	r := v.Rule
	switch r.Decide {
	case DecideAllow:
		s := v.Use.Label() + " allows it: approved at once, nobody is asked"
		if r.Reason != "" {
			s += " (" + r.Reason + ")"
		}
		return s
	case DecideDeny:
		s := v.Use.Label() + " denies it at once, nobody is asked"
		if r.Reason != "" {
			s += ": " + r.Reason
		}
		if v.passed != nil {
			// Named as the asked event names it (askedReason): the deny
			// decided only because it came after a rule that fails here.
			s = "a rule could not be evaluated (" + v.passed.Error() + "), and a later one decides: " + s
		}
		return s
	}
	return r.shapeReason(v.Use)
}

package core

import (
	"fmt"
	"strings"
)

// callVerdicts runs route's rules over each call of a batch ask, as over
// an approval of that one call: one verdict per call (nil for an ask that
// is not a batch, or a route with no rules).
func callVerdicts(route Route, in AskInput) []RuleVerdict {
	if len(route.Rules) == 0 || in.Kind != KindApproval || len(in.Calls) == 0 {
		return nil
	}
	out := make([]RuleVerdict, len(in.Calls))
	for i, c := range in.Calls {
		one := in
		one.Calls, one.ToolCallID, one.Tool, one.Arguments = nil, c.ToolCallID, c.Tool, c.Arguments
		out[i] = evalRules(route, one)
	}
	return out
}

// shapeBatch applies the ask rules a batch's calls matched to in, the
// strictest of each: hard to reverse if any says so (reversible only if
// every call still to be asked matched a rule saying so), the largest
// quorum, the shortest timeout, and the route they name, which must be
// one. It reports whether it changed anything.
func shapeBatch(in *AskInput, vs []RuleVerdict) (bool, error) {
	routed := -1 // the call whose rule names the route
	changed, hard, asked, reversible := false, false, 0, 0
	for i := range vs {
		r := vs[i].Rule
		if r != nil && r.Decide != DecideAsk {
			continue // decided at the ask: not asked of anyone
		}
		asked++
		if r == nil {
			continue
		}
		if r.Route != "" {
			if routed >= 0 && vs[routed].Rule.Route != r.Route {
				return false, Errorf(CodeInvalid, "ask", "%s sends call %q to route %q and %s sends call %q to route %q; a batch goes to one route: ask them apart",
					vs[routed].Use.Label(), in.Calls[routed].ToolCallID, vs[routed].Rule.Route, vs[i].Use.Label(), in.Calls[i].ToolCallID, r.Route)
			}
			routed = i
		}
		switch r.Reversibility {
		case HardToReverse:
			in.Reversibility, changed, hard = HardToReverse, true, true
		case Reversible:
			reversible++
		}
		if r.Quorum > in.Quorum {
			in.Quorum, changed = r.Quorum, true
		}
		if r.Timeout != 0 && (in.Timeout == 0 || r.Timeout < in.Timeout) {
			in.Timeout, changed = r.Timeout, true
		}
	}
	if asked > 0 && reversible == asked && !hard {
		in.Reversibility, changed = Reversible, true
	}
	if routed >= 0 && in.Route != vs[routed].Rule.Route {
		in.Route, changed = vs[routed].Rule.Route, true
	}
	return changed, nil
}

// callsReason is what the asked event records of the rules a batch's
// calls matched, one clause per call ("" when none did).
func callsReason(vs []RuleVerdict, calls []CallInput) string {
	var parts []string
	for i, v := range vs {
		if why := v.askedReason(); why != "" {
			parts = append(parts, fmt.Sprintf("call %q: %s", calls[i].ToolCallID, why))
		}
	}
	return strings.Join(parts, "; ")
}

package core

import (
	"fmt"
	"strings"
)

// shapeBatch applies the ask rules a batch's calls matched to in, the
// strictest of each: hard to reverse if any says so (reversible only if
// every call still to be asked matched a rule saying so), the largest
// quorum, the shortest timeout, and the route they send their calls to,
// which must be one. shaped is each call as an approval of that call
// alone would be asked after the rules (followRules): what its rules
// made of the batch's input. It reports whether it changed anything.
func shapeBatch(in *AskInput, vs []RuleVerdict, shaped []AskInput) (bool, error) {
	routed := -1 // the call whose rules send it to another route
	changed, hard, asked, reversible := false, false, 0, 0
	to := in.Route
	for i := range vs {
		r := vs[i].Rule
		if r != nil && r.Decide != DecideAsk {
			continue // decided at the ask: not asked of anyone
		}
		asked++
		if r == nil {
			continue
		}
		c := shaped[i]
		if c.Route != in.Route {
			if routed >= 0 && shaped[routed].Route != c.Route {
				return false, Errorf(CodeInvalid, "ask", "%s sends call %q to route %q and %s sends call %q to route %q; a batch goes to one route: ask them apart",
					vs[routed].Use.Label(), in.Calls[routed].ToolCallID, shaped[routed].Route, vs[i].Use.Label(), in.Calls[i].ToolCallID, c.Route)
			}
			routed, to = i, c.Route
		}
		switch c.Reversibility {
		case HardToReverse:
			hard = true
		case Reversible:
			reversible++
		}
		if c.Quorum > in.Quorum {
			in.Quorum, changed = c.Quorum, true
		}
		if c.Timeout != 0 && (in.Timeout == 0 || c.Timeout < in.Timeout) {
			in.Timeout, changed = c.Timeout, true
		}
	}
	switch {
	case hard:
		in.Reversibility, changed = HardToReverse, true
	case asked > 0 && reversible == asked:
		in.Reversibility, changed = Reversible, true
	}
	if to != in.Route {
		in.Route, changed = to, true
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

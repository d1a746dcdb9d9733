package core

import (
	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
)

// EveryCallCovered reports whether the rules of in's route treat every
// approval of in.Tool by in.Agent in run in.RunID, whatever its arguments
// and labels, as one a standing approval covers (asked as reversible on
// that route) or one they allow outright. Only then may a host be told to
// stop asking about the tool altogether (adapters/hooks): otherwise a
// later call of it (a rm -rf among Bash calls) could need more than a
// standing approval gives, and a rule kept by the host would let it run
// without askbridge hearing of it.
//
// The conditions are evaluated partially, the arguments and labels
// unknown. A rule that may match must itself be safe, and must not read
// the arguments (a call lacking a key it reads stops the rules, and is
// asked of a person); the first that surely matches ends the search; if
// none surely does, some calls are asked as in says, which must then be
// reversible. A condition that cannot be evaluated answers no.
func (s *Service) EveryCallCovered(in AskInput) bool {
	route, ok := s.coverRoute(&in)
	if !ok {
		return false
	}
	vars, err := cel.PartialVars(map[string]any{
		"tool": in.Tool, "agent": in.Agent, "run": in.RunID, "route": route.Name, "kind": string(in.Kind),
	}, cel.AttributePattern("args"), cel.AttributePattern("labels"))
	if err != nil {
		return false
	}
	for i := range route.Rules {
		r := &route.Rules[i]
		if r.partial == nil {
			return false
		}
		out, _, err := r.partial.Eval(vars)
		if err != nil {
			return false
		}
		sure := false
		switch {
		case types.IsUnknown(out) && r.readsArgs:
			// It reads the arguments, so some call may lack what it
			// reads: the rules stop there, and a person is asked about
			// that call, which a rule kept by the host would let run.
			return false
		case types.IsUnknown(out):
		case out.Value() == true:
			sure = true
		case out.Value() == false:
			continue
		default:
			return false
		}
		if !r.coverable(in) {
			return false
		}
		if sure {
			return true
		}
	}
	return in.Reversibility == Reversible
}

// CallCovered reports whether the rules of in's route leave this very
// call (its arguments as in has them, whatever its labels) to a standing
// approval on that route, or allow it outright: what EveryCallCovered
// asks of every call of the tool, asked of one. The labels are unknown
// because a host told to stop asking about this call keeps that for the
// rest of its session, wherever it then runs (a Claude Code session rule
// for one Bash command holds in every directory the session moves to,
// and the hook names the project by its directory): a rule that leaves
// the call to a standing approval in one project only must not let it
// run unasked in another. A rule that cannot be evaluated answers no.
func (s *Service) CallCovered(in AskInput) bool {
	route, ok := s.coverRoute(&in)
	if !ok || len(route.Rules) == 0 {
		return ok && in.Reversibility == Reversible
	}
	var args any = map[string]any{}
	if len(in.Arguments) > 0 {
		var err error
		if args, err = ruleArgs(in.Arguments); err != nil {
			return false
		}
	}
	vars, err := cel.PartialVars(map[string]any{
		"tool": in.Tool, "args": args, "agent": in.Agent, "run": in.RunID, "route": route.Name, "kind": string(in.Kind),
	}, cel.AttributePattern("labels"))
	if err != nil {
		return false
	}
	for i := range route.Rules {
		r := &route.Rules[i]
		if r.partial == nil {
			return false
		}
		out, _, err := r.partial.Eval(vars)
		if err != nil {
			return false
		}
		sure := false
		switch {
		case types.IsUnknown(out): // it matches in some projects: it must be safe
		case out.Value() == true:
			sure = true
		case out.Value() == false:
			continue
		default:
			return false
		}
		if !r.coverable(in) {
			return false
		}
		if sure {
			return true
		}
	}
	return in.Reversibility == Reversible
}

// coverRoute is the route of in whose rules may leave its calls to a
// standing approval: one configured, for an approval of one call, with no
// quorum (a standing approval never covers what needs one).
func (s *Service) coverRoute(in *AskInput) (Route, bool) {
	route, err := s.rulesRoute(in)
	if err != nil || !ruleApplies(*in) || max(route.quorum(), in.Quorum) > 1 {
		return Route{}, false
	}
	return route, true
}

// coverable reports whether r, matching an ask like in, leaves it to a
// standing approval on in's route or allows it.
func (r *Rule) coverable(in AskInput) bool {
	switch r.Decide {
	case DecideAllow:
		return true
	case DecideDeny:
		return false
	}
	rev := in.Reversibility
	if r.Reversibility != "" {
		rev = r.Reversibility
	}
	return rev == Reversible && r.Quorum <= 1 && (r.Route == "" || r.Route == in.Route)
}

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
// unknown (covered). A rule that may match must itself be safe, and must
// not read the arguments (a call lacking a key it reads stops the rules,
// and is asked of a person); the first that surely matches ends the
// search; if none surely does, some calls are asked as in says, which
// must then be reversible. A condition that cannot be evaluated answers
// no.
func (s *Service) EveryCallCovered(in AskInput) bool {
	return s.covered(in, false)
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
// run unasked in another, nor may one that cannot be evaluated for the
// call in some project (it stops the rules there, and a person is
// asked). A rule that cannot be evaluated answers no.
func (s *Service) CallCovered(in AskInput) bool {
	return s.covered(in, true)
}

// covered is EveryCallCovered (withArgs false: the arguments unknown) and
// CallCovered (withArgs: in's arguments known). The labels' values are
// always unknown (which labels there are is not). A rule whose outcome
// they leave open (it matches in some projects) must be safe, and must
// not fail for any of them: its partial program evaluates exhaustively,
// so a part that fails on the known variables (a key the arguments
// lack) is seen even where an unknown hides it from the outcome (an
// unknown && an error is unknown).
func (s *Service) covered(in AskInput, withArgs bool) bool {
	route, ok := s.coverRoute(&in)
	if !ok {
		return false
	}
	if len(route.Rules) == 0 {
		return in.Reversibility == Reversible
	}
	// The labels are known to hold "project" and "task" alone (as
	// evalRules binds them), their values unknown: a condition reading
	// another label fails for every ask, as evalRules finds it, where the
	// labels unknown whole would leave it unknown, a rule that may match.
	known := map[string]any{"tool": in.Tool, "agent": in.Agent, "run": in.RunID, "route": route.Name, "kind": string(in.Kind),
		"labels": ruleLabels(Labels{})}
	unknown := []*cel.AttributePatternType{
		cel.AttributePattern("labels").QualString("project"), cel.AttributePattern("labels").QualString("task"),
	}
	if withArgs {
		var args any = map[string]any{}
		if len(in.Arguments) > 0 {
			var err error
			if args, err = ruleArgs(in.Arguments); err != nil {
				return false
			}
		}
		known["args"] = args
	} else {
		unknown = append(unknown, cel.AttributePattern("args"))
	}
	vars, err := cel.PartialVars(known, unknown...)
	if err != nil {
		return false
	}
	b := newRuleBudget() // a rule it leaves no room for answers no
	defer b.cancel()
	for i := range route.Rules {
		r := &route.Rules[i]
		if r.partial == nil {
			return false
		}
		out, det, err := b.eval(r.partial, vars, false)
		if err != nil {
			return false
		}
		sure := false
		switch {
		case types.IsUnknown(out) && !withArgs && r.readsArgs:
			// It reads the arguments, so some call may lack what it
			// reads: the rules stop there, and a person is asked about
			// that call, which a rule kept by the host would let run.
			return false
		case types.IsUnknown(out) && failedIn(det):
			// It may fail where the labels make it match (a key the
			// arguments lack, read in one project): the rules stop
			// there, and a person is asked.
			return false
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

// failedIn reports whether any part of an exhaustive evaluation failed.
func failedIn(det *cel.EvalDetails) bool {
	if det == nil || det.State() == nil {
		return true // nothing to tell by: assume the worst
	}
	st := det.State()
	for _, id := range st.IDs() {
		if v, _ := st.Value(id); types.IsError(v) {
			return true
		}
	}
	return false
}

// coverRoute is the route of in whose rules may leave its calls to a
// standing approval: one configured, for an approval of one call, with no
// quorum (a standing approval never covers what needs one).
func (s *Service) coverRoute(in *AskInput) (Route, bool) {
	route, err := rulesRoute(s.conf().cfg.Routes, in)
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

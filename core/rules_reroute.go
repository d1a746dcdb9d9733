package core

import "strconv"

// A rule that asks on another route (Rule.Route) hands the ask to that
// route's rules, as if it had been asked there: a route's rules hold for
// every ask its people see, so a deny there cannot be passed by asking on
// a route whose rule sends the call on to it. They may only make the ask
// stricter than the rule that sent it there did:
//
//   - a deny there denies it at once (the first deny on the way wins);
//   - an ask rule there shapes it further, the stricter of each setting
//     winning (tighten), and may send it on again;
//   - an allow there does not approve it: the rule that sent it asked for
//     a person, and a person is asked.
//
// Each route's rules run at most once per ask: a rule sending the ask to a
// route whose rules already ran is followed, but those rules do not run
// again (they would only send it on), so no configuration loops.

// ruled is an ask as the rules of the routes it passes leave it: its
// input as their ask rules shaped it, and their verdicts on it and on
// each call of a batch.
type ruled struct {
	in       AskInput
	verdict  RuleVerdict
	calls    []RuleVerdict
	reshaped bool
}

// applyRules runs the policy rules over in, asked on route (configured,
// in.Route's), following the routes its ask rules send it to: the one
// place the rules meet an ask, for the ask itself and for policy test. An
// ask rule naming a route not configured is CodeInvalid (the load checks
// that it is); so is a batch whose calls go to two routes, refused with
// its calls' verdicts.
//
// Every rule they evaluate, for every call and on every route, is
// evaluated within one budget (ruleBudget).
func applyRules(routes map[string]Route, route Route, in AskInput) (ruled, error) {
	b := newRuleBudget()
	defer b.cancel()
	return applyRulesBy(routes, route, in, b.within)
}

// ruleStep runs one route's rules over an ask (evalRules): within a
// budget of the ask's own (ruleBudget.within), or a pin's, which also
// gives the verdict it already reached again (Pinned.step).
type ruleStep func(route Route, in AskInput) RuleVerdict

// applyRulesBy is applyRules with each route's rules run by step.
func applyRulesBy(routes map[string]Route, route Route, in AskInput, step ruleStep) (ruled, error) {
	out := ruled{in: in}
	if ruleApplies(in) {
		var err error
		if out.in, out.verdict, out.reshaped, err = followRules(routes, route, in, step); err != nil {
			return ruled{}, err
		}
		return out, nil
	}
	if len(route.Rules) == 0 || in.Kind != KindApproval || len(in.Calls) == 0 {
		return out, nil
	}
	out.calls = make([]RuleVerdict, len(in.Calls))
	shaped := make([]AskInput, len(in.Calls))
	for i, c := range in.Calls {
		one := in
		one.Calls, one.ToolCallID, one.Tool, one.Arguments = nil, c.ToolCallID, c.Tool, c.Arguments
		var err error
		if shaped[i], out.calls[i], _, err = followRules(routes, route, one, step); err != nil {
			return ruled{}, err
		}
	}
	var err error
	out.reshaped, err = shapeBatch(&out.in, out.calls, shaped)
	return out, err
}

// followRules runs route's rules over in, an approval of one call, and,
// while the rule that matched asks on another route, that route's rules,
// as the comment above says. It returns in as the ask rules shaped it,
// the verdict (the deny on the way, else the first route's, its Err set
// if any route's rules stopped at a rule that could not be evaluated) and
// whether an ask rule shaped in. Each route's rules are run by step.
func followRules(routes map[string]Route, route Route, in AskInput, step ruleStep) (AskInput, RuleVerdict, bool, error) {
	hop := step(route, in)
	out, shaped := hop, false
	ran := map[string]bool{route.Name: true}
	var hops []RuleVerdict
	for hop.Rule != nil && hop.Rule.Decide == DecideAsk {
		if shaped {
			hop.Rule.tighten(&in)
		} else {
			hop.Rule.shape(&in)
			shaped = true
		}
		if ran[in.Route] {
			break
		}
		ran[in.Route] = true
		next, ok := routes[in.Route]
		if !ok {
			return in, RuleVerdict{}, false, Errorf(CodeInvalid, "ask", "%s sends it to route %q, which is not configured", hop.Use.Label(), in.Route)
		}
		if len(next.Rules) == 0 {
			break // nothing to run there: asked as shaped
		}
		if hops == nil {
			hops = []RuleVerdict{out}
		}
		hop = step(next, in)
		hop.on = next.Name
		hops = append(hops, hop)
		if hop.Rule != nil && hop.Rule.Decide == DecideDeny {
			hop.hops = hops
			return in, hop, shaped, nil
		}
		if out.Err == nil {
			out.Err = hop.Err
		}
	}
	out.hops = hops
	return in, out, shaped, nil
}

// tighten applies r, an ask rule of a route an earlier rule sent the ask
// to, to in as shape does, but only where it makes the ask stricter: no
// less hard to reverse, no fewer people, no more time. A catch-all of the
// route a call is sent to must not undo what the rule that sent it there
// asked for.
func (r *Rule) tighten(in *AskInput) {
	was := *in
	r.shape(in)
	if was.Reversibility == HardToReverse {
		in.Reversibility = HardToReverse
	}
	in.Quorum = max(in.Quorum, was.Quorum)
	if was.Timeout != 0 && (in.Timeout == 0 || was.Timeout < in.Timeout) {
		in.Timeout = was.Timeout
	}
}

// rerouted words the rules of each route after the first that a
// rerouted ask met, for the asked event (event) or policy test; "" for an
// ask that was not sent on.
func (v RuleVerdict) rerouted(event bool) string {
	s := ""
	for _, hop := range v.hops[min(1, len(v.hops)):] {
		s += "; then on route " + strconv.Quote(hop.on) + ": "
		switch {
		case hop.Rule != nil && hop.Rule.Decide == DecideAllow:
			s += hop.Use.Label() + " would allow it, but it was sent there to be asked of a person: asked"
		case hop.Rule == nil && hop.Err == nil:
			s += "no rule matches"
		case hop.Rule == nil:
			s += "a rule could not be evaluated, so no standing approval covers it (" + hop.Err.Error() + ")"
		case event:
			s += hop.askedReason()
		default:
			s += hop.Explain()
		}
	}
	return s
}

// escalation refuses an ask made with on_timeout escalate that a rule
// sent from route asked to route to, which names no escalate_to, with a
// refusal that says so and names the rule: newQuestion's own refusal
// names route to alone, one the agent never chose, and nothing in it
// says why the ask went there. It is refused rather than asked with
// another timeout policy: escalating along the escalate_to of the route
// asked would show the call to people the rule sent it away from, and
// denying or asking again at the deadline is a policy the agent did not
// choose and would learn of only when it came. An ask no rule moved
// keeps newQuestion's refusal: the route is then the agent's choice.
func (r ruled) escalation(asked string, to Route) error {
	if r.in.OnTimeout != OnTimeoutEscalate || to.EscalateTo != "" || r.in.Route == asked {
		return nil
	}
	for _, v := range append([]RuleVerdict{r.verdict}, r.calls...) {
		if u := v.sentTo(r.in.Route); u != nil {
			return Errorf(CodeInvalid, "ask", "%s sent it from route %q to route %q, which names no escalate_to, so on_timeout escalate has nowhere to go: ask with on_timeout deny or reask",
				u.Label(), asked, r.in.Route)
		}
	}
	return nil
}

// sentTo is the ask rule on v's way that last sent the ask to route,
// the one that put it there; nil if none did.
func (v RuleVerdict) sentTo(route string) *RuleUse {
	hops := v.hops
	if len(hops) == 0 {
		hops = []RuleVerdict{v}
	}
	for i := len(hops) - 1; i >= 0; i-- {
		if h := hops[i]; h.Rule != nil && h.Rule.Decide == DecideAsk && h.Rule.Route == route {
			return &hops[i].Use
		}
	}
	return nil
}

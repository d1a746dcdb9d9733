package core

import "context"

// Pinned is one configuration, and one budget for its rules, held for a
// door that runs the rules over several forms of one ask before it asks
// one of them (law 13: one configuration per decision). The hook door
// runs them over a Codex network access prompt as Bash, as
// NetworkAccess, and on the route a Bash rule sends it to, to choose what
// to ask; read afresh at each step, a reload between two of them let the
// door choose by one configuration and the ask decide by another, so two
// configurations that each deny the prompt could together allow it.
//
// The ask (AskOrRepeat) gives each route's rules the verdict they
// already reached over what they read of the ask (ruleKey), so it
// decides as the door's choice saw; the rules' ask rules still shape
// the input actually asked. A Pinned is for one goroutine.
type Pinned struct {
	s      *Service
	conf   *bound
	budget heldBudget
	seen   map[ruleKey]RuleVerdict
}

// Pin holds the configuration in force now for the steps of one ask;
// Close it once the ask is made.
func (s *Service) Pin() *Pinned {
	return &Pinned{s: s, conf: s.conf(), seen: map[ruleKey]RuleVerdict{}}
}

// errUnpinned is what a Pinned answers once closed.
var errUnpinned = Errorf(CodeInternal, "pin", "the configuration was used after its pin was closed")

// Evaluate is Service.Evaluate under the pinned configuration, within
// the pin's budget.
func (p *Pinned) Evaluate(in AskInput) (RuleVerdict, error) {
	if p.conf == nil {
		return RuleVerdict{}, errUnpinned
	}
	routes := p.conf.cfg.Routes
	route, err := rulesRoute(routes, &in)
	if err != nil {
		return RuleVerdict{}, err
	}
	rs, err := applyRulesBy(routes, route, in, p.step)
	return rs.verdict, err
}

// AskOrRepeat is Service.AskOrRepeat under the pinned configuration,
// its rules' verdicts those Evaluate reached where it read the same.
func (p *Pinned) AskOrRepeat(ctx context.Context, in AskInput) (*Question, bool, error) {
	if p.conf == nil {
		return nil, false, errUnpinned
	}
	conf := p.conf
	return p.s.askBy(ctx, in, func(in AskInput) (askPlan, error) { return p.s.planAskOn(conf, in, p.step) })
}

// Close lets the configuration go: a door closes its pin before it
// waits for a person, so that a wait of hours holds no configuration
// reloaded away.
func (p *Pinned) Close() { p.conf, p.seen = nil, nil }

// ruleKey is everything of an ask that a route's rules read (evalRules):
// the route, whose rules the pinned configuration fixes, and the ask's
// kind, tool, arguments (canonical), agent, run and labels.
type ruleKey struct {
	route, kind, tool, args, agent, run, project, task string
}

// step runs route's rules over in within the pin's budget, or gives the
// verdict they reached before over an ask they read alike.
func (p *Pinned) step(route Route, in AskInput) RuleVerdict {
	key, ok := ruleKeyOf(route, in)
	if ok {
		if v, seen := p.seen[key]; seen {
			return v
		}
	}
	v := p.budget.within(route, in)
	if ok {
		p.seen[key] = v
	}
	return v
}

// ruleKeyOf is in's ruleKey on route; ok is false for arguments that do
// not read (the rules fail alike at each step) and for a batch, which the
// rules read call by call.
func ruleKeyOf(route Route, in AskInput) (ruleKey, bool) {
	if len(in.Calls) > 0 {
		return ruleKey{}, false
	}
	var args string
	if len(in.Arguments) > 0 {
		canon, err := CanonicalArguments(in.Arguments)
		if err != nil {
			return ruleKey{}, false
		}
		args = string(canon)
	}
	return ruleKey{route: route.Name, kind: string(in.Kind), tool: in.Tool, args: args, agent: string(in.Agent),
		run: string(in.RunID), project: in.Labels.Project, task: in.Labels.Task}, true
}

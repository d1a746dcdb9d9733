package core

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
)

// Policy rules (law 13): a route's rules are checked in order when an
// approval of one tool call is asked on it, and the first whose condition
// holds decides before a person sees it. allow and deny close the
// question at once, through the chokepoint, recorded like an answer with
// CloserPolicy and the rule (Resolution.Policy); ask lets it be asked,
// with the rule's route, reversibility, quorum and timeout in place of the
// asker's; the rules of a route it sends the ask to then run over it, and
// may deny it or ask it more strictly, never less (rules_reroute.go). No
// rule matching asks as configured.
//
// Conditions are CEL expressions, compiled and type-checked when the
// configuration loads, over these variables:
//
//	tool    string               the tool the approval is for
//	args    dyn                  the call's arguments, as their JSON
//	agent   string               the asking agent
//	run     string               its run id
//	labels  map(string, string)  "project" and "task"
//	route   string               the route asked for
//	kind    string               the question's kind ("approval")
//
// A condition that cannot be evaluated for an ask (a key its arguments
// lack, say, or past its cost limit, or past what the budget of the
// whole ask leaves it: ruleBudget) stops the rules there, save that a
// later deny that matches still denies, and else the first later ask
// rule that matches still shapes the ask (pastBroken): otherwise the ask
// is asked of a person as configured. No later allow decides, and no
// standing approval covers it (the broken rule might have denied it), so
// a broken rule never lets a call through, nor keeps one from being
// denied or from being asked as strictly as the rules say. Questions of
// other kinds are asked as configured: no rule sees them.
//
// A batch's calls are each run through the rules as an approval of that
// one call would be. A call a rule allows or denies is decided at the ask,
// as a part (ItemAnswer.Policy), so batching calls never slips one past a
// deny; the batch closes at once if every call was decided so. The ask
// rules its calls match shape the batch together, the strictest of each
// winning (shapeBatch).

// Decision is what a rule decides.
type Decision string

const (
	// DecideAllow approves the call at once; nobody is asked.
	DecideAllow Decision = "allow"
	// DecideDeny denies it at once, with the rule's reason.
	DecideDeny Decision = "deny"
	// DecideAsk asks people, shaped by the rule. It is what a rule with
	// no decide does.
	DecideAsk Decision = "ask"
)

// MaxRules caps a route's rules.
const MaxRules = 200

// ruleCost caps what one condition may cost to evaluate, in CEL's cost
// units; what all the conditions of one ask may cost together, and how
// long they may take, is capped too (ruleBudget).
const ruleCost = 1_000_000

// Rule is one policy rule of a route.
type Rule struct {
	// Name, optional, names the rule in events, resumes and cards
	// (RuleUse.Label); metrics count a rule by its index.
	Name string `json:"name,omitempty"`
	// When is the CEL condition; it must return a bool.
	When   string   `json:"when"`
	Decide Decision `json:"decide,omitempty"`
	// Reason is the operator's words for the decision: the agent reads
	// them, fenced, after a deny.
	Reason string `json:"reason,omitempty"`
	// Route, Reversibility, Quorum and Timeout, on an ask, replace the
	// asker's (each when set), and are then checked as any ask is.
	Route         string        `json:"route,omitempty"`
	Reversibility Reversibility `json:"reversibility,omitempty"`
	Quorum        int           `json:"quorum,omitempty"`
	Timeout       time.Duration `json:"timeout,omitempty"`

	prg cel.Program
	// partial is the condition compiled for partial evaluation, with
	// some variables unknown, and exhaustive, so that a part that fails
	// is seen even where an unknown hides it from the outcome
	// (EveryCallCovered, CallCovered).
	partial cel.Program
	// readsArgs: the condition reads the call's arguments, so it may
	// fail on a call that lacks a key it reads (which stops the rules).
	readsArgs bool
}

// RuleUse is what a question keeps of the rule that decided it: which
// route's rule, its index there (from 0) and its name, and what it
// decided.
type RuleUse struct {
	Route  string   `json:"route"`
	Index  int      `json:"index"`
	Name   string   `json:"name,omitempty"`
	Decide Decision `json:"decide"`
}

// decides reports whether the rule decided (allowed or denied) rather than
// reshaped what people are asked. What a rule decided no person decides:
// the question, or the call, closes as the rule says (at the ask, or at a
// repeat of it if the first ask did not live to close it).
func (u *RuleUse) decides() bool {
	return u != nil && (u.Decide == DecideAllow || u.Decide == DecideDeny)
}

// verb is what a deciding rule did, for people: "allowed" or "denied".
func (u *RuleUse) verb() string {
	if u.Decide == DecideAllow {
		return "allowed"
	}
	return "denied"
}

// Label names the rule for people: `policy rule 2 of route "claude-code"
// ("network")`.
func (u RuleUse) Label() string {
	s := "policy rule " + strconv.Itoa(u.Index) + " of route " + strconv.Quote(u.Route)
	if u.Name != "" {
		s += " (" + strconv.Quote(u.Name) + ")"
	}
	return s
}

// RuleError is a rule that cannot be used: the route and index naming
// it, the field at fault, and what is wrong, with the position of a CEL
// error (line and column, from 1) in its message. Spot, set for a rule
// refused at load, is how a person finds the rule in their file
// (Rule.spot): an index alone sends them counting down a long list.
type RuleError struct {
	Route string
	Index int
	Field string
	Msg   string
	Spot  string
}

func (e *RuleError) Error() string {
	s := fmt.Sprintf("routes.%s.rules[%d].%s: %s", e.Route, e.Index, e.Field, e.Msg)
	if e.Spot != "" {
		s += " (the rule " + e.Spot + ")"
	}
	return s
}

// spotLen is how much of a rule's condition or reason names it.
const spotLen = 60

// spot names r as its file shows it: by its name, else by its condition,
// else by what it decides; each on one line, cut at spotLen characters.
func (r Rule) spot() string {
	short := func(s string) string {
		s = strings.Join(strings.Fields(s), " ")
		if n := []rune(s); len(n) > spotLen {
			s = string(n[:spotLen]) + "…"
		}
		return s
	}
	switch {
	case strings.TrimSpace(r.Name) != "":
		return "named " + strconv.Quote(short(r.Name))
	case strings.TrimSpace(r.When) != "":
		return "with when: " + short(r.When)
	}
	var keys []string
	if r.Decide != "" {
		keys = append(keys, "decide: "+short(string(r.Decide)))
	}
	if r.Route != "" {
		keys = append(keys, "route: "+short(r.Route))
	}
	if r.Reason != "" {
		keys = append(keys, "reason: "+short(r.Reason))
	}
	if len(keys) == 0 {
		return ""
	}
	return "with " + strings.Join(keys, ", ")
}

var ruleEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("tool", cel.StringType),
		cel.Variable("args", cel.DynType),
		cel.Variable("agent", cel.StringType),
		cel.Variable("run", cel.StringType),
		cel.Variable("labels", cel.MapType(cel.StringType, cel.StringType)),
		cel.Variable("route", cel.StringType),
		cel.Variable("kind", cel.StringType),
	)
})

// CompileRules checks route's rules and compiles their conditions.
// routes are the configured route names, for the route an ask rule
// names; nil skips that check. A rule's timeout is held to the floor of
// an asker's (configuredTimeout) and, with maxTimeout set, to it. The
// first rule that cannot be used is a *RuleError.
func CompileRules(route string, rules []Rule, routes map[string]bool, maxTimeout time.Duration) ([]Rule, error) {
	if len(rules) > MaxRules {
		return nil, &RuleError{Route: route, Index: MaxRules, Field: "when", Msg: fmt.Sprintf("a route takes at most %d rules", MaxRules)}
	}
	env, err := ruleEnv()
	if err != nil {
		return nil, fmt.Errorf("core: policy rules: %w", err)
	}
	out := make([]Rule, len(rules))
	for i, r := range rules {
		bad := r.check(routes, maxTimeout)
		if bad == nil {
			bad = r.compile(env)
		}
		if bad != nil {
			bad.Route, bad.Index, bad.Spot = route, i, rules[i].spot()
			return nil, bad
		}
		out[i] = r
	}
	return out, nil
}

// ruleProblem is a rule's field that cannot be used, for CompileRules to
// say where the rule is.
func ruleProblem(field, format string, args ...any) *RuleError {
	return &RuleError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// check checks r's fields other than its condition, and spells an empty
// decision as ask. routes and maxTimeout are CompileRules'.
func (r *Rule) check(routes map[string]bool, maxTimeout time.Duration) *RuleError {
	if strings.TrimSpace(r.When) == "" {
		return ruleProblem("when", "a condition is required")
	}
	switch r.Decide {
	case "", DecideAsk:
		r.Decide = DecideAsk
	case DecideAllow, DecideDeny:
		if r.Route != "" || r.Reversibility != "" || r.Quorum != 0 || r.Timeout != 0 {
			return ruleProblem("decide", "%s closes the question at once: route, reversibility, quorum and timeout go with ask", r.Decide)
		}
	default:
		return ruleProblem("decide", "%q is not allow, deny or ask", r.Decide)
	}
	if r.Reversibility != "" {
		if _, err := ParseReversibility(string(r.Reversibility)); err != nil {
			return ruleProblem("reversibility", "%q is not reversible or hard_to_reverse", r.Reversibility)
		}
	}
	if r.Route != "" && routes != nil && !routes[r.Route] {
		return ruleProblem("route", "no route named %q", r.Route)
	}
	if r.Quorum < 0 || r.Quorum > MaxQuorum {
		return ruleProblem("quorum", "must be between 1 and %d", MaxQuorum)
	}
	if r.Timeout != 0 {
		if bad := configuredTimeout(r.Timeout, maxTimeout); bad != "" {
			return ruleProblem("timeout", "%s", bad)
		}
	}
	if len(r.Reason) > MaxReasonLen {
		return ruleProblem("reason", "longer than %d bytes", MaxReasonLen)
	}
	return nil
}

// compile compiles r's condition in env, which must return bool, into
// its programs: one to evaluate it, one to evaluate it partially.
func (r *Rule) compile(env *cel.Env) *RuleError {
	ast, iss := env.Compile(r.When)
	if iss != nil && iss.Err() != nil {
		var msgs []string
		for _, e := range iss.Errors() {
			msgs = append(msgs, fmt.Sprintf("line %d, column %d: %s", e.Location.Line(), e.Location.Column()+1, e.Message))
		}
		return ruleProblem("when", "%s", strings.Join(msgs, "; "))
	}
	if !ast.OutputType().IsExactType(cel.BoolType) {
		return ruleProblem("when", "the condition returns %s; it must return bool", ast.OutputType())
	}
	if bad := badPattern(ast); bad != nil {
		return bad
	}
	var err error
	opts := append([]cel.ProgramOption{cel.CostLimit(ruleCost)}, patternOptions...)
	if r.prg, err = env.Program(ast, opts...); err != nil {
		return ruleProblem("when", "%v", err)
	}
	if r.partial, err = env.Program(ast, append(opts, cel.EvalOptions(cel.OptPartialEval, cel.OptExhaustiveEval))...); err != nil {
		return ruleProblem("when", "%v", err)
	}
	for _, ref := range ast.NativeRep().ReferenceMap() {
		r.readsArgs = r.readsArgs || ref.Name == "args"
	}
	return nil
}

// badPattern is the first regular expression written in a's condition
// that does not compile, named by its place there, as a syntax error is;
// nil when there is none. A pattern the condition computes (from the
// arguments, say) is known only at the ask, and is left to it.
func badPattern(a *cel.Ast) *RuleError {
	native := a.NativeRep()
	var bad *RuleError
	ast.PreOrderVisit(native.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if bad != nil || e.Kind() != ast.CallKind || e.AsCall().FunctionName() != "matches" {
			return
		}
		args := e.AsCall().Args() // the pattern last, called as a method or as a function
		p := args[len(args)-1]
		if p.Kind() != ast.LiteralKind {
			return
		}
		s, ok := p.AsLiteral().(types.String)
		if !ok {
			return
		}
		if _, err := regexp.Compile(string(s)); err != nil {
			at := native.SourceInfo().GetStartLocation(p.ID())
			bad = ruleProblem("when", "line %d, column %d: %v", at.Line(), at.Column()+1, err)
		}
	}))
	return bad
}

// shape applies an ask rule to in. A host's own permission prompt keeps
// a timeout shorter than the rule's (AskInput.HostPrompt): a longer one
// would only put a deadline on its cards that nobody waits for.
func (r *Rule) shape(in *AskInput) {
	if r.Route != "" {
		in.Route = r.Route
	}
	if r.Reversibility != "" {
		in.Reversibility = r.Reversibility
	}
	if r.Quorum != 0 {
		in.Quorum = r.Quorum
	}
	switch {
	case r.Timeout == 0:
	case in.HostPrompt && in.Timeout != 0:
		in.Timeout = min(in.Timeout, r.Timeout)
	default:
		in.Timeout = r.Timeout
	}
}

// shapeReason words what an ask rule changed, for the asked event.
func (r *Rule) shapeReason(u RuleUse) string {
	var parts []string
	if r.Route != "" {
		parts = append(parts, "route "+r.Route)
	}
	if r.Reversibility != "" {
		parts = append(parts, "reversibility "+string(r.Reversibility))
	}
	if r.Quorum != 0 {
		parts = append(parts, "quorum "+strconv.Itoa(r.Quorum))
	}
	if r.Timeout != 0 {
		parts = append(parts, "timeout "+r.Timeout.String())
	}
	what := "asked as configured"
	if len(parts) > 0 {
		what = "asked with " + strings.Join(parts, ", ")
	}
	s := u.Label() + " matched: " + what
	if r.Reason != "" {
		s += ": " + r.Reason
	}
	return s
}

// Evaluate runs the rules of the route in would take (DefaultRoute when
// it names none) over in, without asking anything: what askbridge policy
// test shows. An unknown route is CodeInvalid.
func (s *Service) Evaluate(in AskInput) (RuleVerdict, error) {
	rs, err := s.evaluate(in)
	return rs.verdict, err
}

// EvaluateCalls is Evaluate for a batch: each call's verdict, as the
// rules see it at the ask (an approval of that one call would), also
// where the ask would refuse the batch whole for what they make of it
// together (calls sent to two routes).
func (s *Service) EvaluateCalls(in AskInput) ([]RuleVerdict, error) {
	rs, err := s.evaluate(in)
	if err != nil && rs.calls == nil {
		return nil, err
	}
	if rs.calls == nil {
		rs.calls = make([]RuleVerdict, len(in.Calls)) // no rules: every call asked as configured
	}
	return rs.calls, nil
}

// evaluate runs the rules over in as an ask would (applyRules), under
// the configuration in force.
func (s *Service) evaluate(in AskInput) (ruled, error) {
	routes := s.conf().cfg.Routes
	route, err := rulesRoute(routes, &in)
	if err != nil {
		return ruled{}, err
	}
	return applyRules(routes, route, in)
}

// rulesRoute is the route of routes whose rules see in ("" the default,
// which it fills in), CodeInvalid when it is not configured.
func rulesRoute(routes map[string]Route, in *AskInput) (Route, error) {
	if in.Route == "" {
		in.Route = DefaultRoute
	}
	route, ok := routes[in.Route]
	if !ok {
		return Route{}, Errorf(CodeInvalid, "policy test", "route %q is not configured", in.Route)
	}
	return route, nil
}

// askedReason is what the asked event records of the rules: the rule
// that decided, or the one that could not be evaluated, on each route the
// ask met.
func (v RuleVerdict) askedReason() string {
	if len(v.hops) > 0 {
		return v.hops[0].askedReason() + v.rerouted(true)
	}
	switch {
	case v.Err != nil && v.Rule != nil:
		return "policy rules stopped (" + v.Err.Error() + "); " + v.Rule.shapeReason(v.Use)
	case v.Err != nil:
		return "policy rules stopped, asked as configured: " + v.Err.Error()
	case v.Rule == nil:
		return ""
	case v.Rule.Decide == DecideAsk:
		return v.Rule.shapeReason(v.Use)
	case v.passed != nil:
		return "policy rules stopped (" + v.passed.Error() + "); " + v.Use.Label() + " decided it at the ask: " + string(v.Rule.Decide)
	}
	return v.Use.Label() + " decided it at the ask: " + string(v.Rule.Decide)
}

// closeByRule closes a just-parked approval as the rule that matched it
// decided, through the chokepoint like any other close.
func (s *Service) closeByRule(ctx context.Context, q *Question, v RuleVerdict) (*Question, error) {
	r, use := v.Rule, v.Use
	o, err := s.resolve(ctx, attempt{op: "policy rule", id: q.ID, door: doorSystem, actor: System,
		build: func(q *Question, now time.Time) (Transition, error) {
			if q.Call == nil {
				return Transition{}, Errorf(CodeInvalid, "policy rule", "a policy rule decides one tool call")
			}
			approved := r.Decide == DecideAllow
			reason := r.Reason
			if reason == "" && !approved {
				reason = "denied by " + use.Label()
			}
			res := &Resolution{State: StateAnswered, ClosedBy: CloserPolicy, Decider: publicDecider(System), At: now,
				Approved: &approved, Reason: reason, ArgumentsSHA256: q.Call.ArgumentsSHA256, Policy: &use}
			why := use.Label() + " " + use.verb() + " it; no person was asked"
			if r.Reason != "" {
				why += ": " + r.Reason
			}
			return Transition{Resolution: res, Event: s.closeEvent(q, res, why)}, nil
		}})
	if err != nil {
		return nil, err
	}
	return o.Question, nil
}

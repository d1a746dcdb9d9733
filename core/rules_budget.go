package core

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"
)

// The rules one ask meets are evaluated within one budget (law 9): each
// condition has its cost limit (ruleCost), but a route takes MaxRules
// rules, a batch MaxBatchCalls calls, and an ask rule may send a call on
// to the rules of other routes, so the limit alone let one ask cost
// thousands of conditions' worth. The budget is a total of CEL's cost
// (askRuleCost), which is deterministic, and a time (askRuleTime), which
// also holds where CEL's cost model misjudges the work: it is checked
// before each condition, at each round of a comprehension and before each
// regular expression (boundedMatch). A condition the budget leaves no
// room for, or that runs out of time, cannot be evaluated, and is taken
// as a rule that fails is (the rules stop there; nothing later allows;
// no standing approval covers the call). The last quarter of each is
// kept for pastBroken, so that an agent padding its arguments to spend
// the budget on early rules cannot keep a later deny from denying.
// Overshoot is bounded by one condition's limit, and by one match
// (matchSteps).

const (
	// askRuleCost is the CEL cost the conditions of one ask may take
	// together: four conditions at their limit.
	askRuleCost = 4 * ruleCost
	// askRuleTime is the time they may take together.
	askRuleTime = 2 * time.Second
)

// ruleBudget is what is left of one ask's budget.
type ruleBudget struct {
	// all ends at askRuleTime, main a quarter before it: the rules
	// before a broken one have main, pastBroken all.
	all, main context.Context
	cancel    context.CancelFunc
	spent     uint64
}

// newRuleBudget starts an ask's budget; cancel it when its rules are
// done.
func newRuleBudget() *ruleBudget { return resumeRuleBudget(0, 0) }

// resumeRuleBudget is a budget of which spent in cost and took in time
// are used already (heldBudget).
func resumeRuleBudget(spent uint64, took time.Duration) *ruleBudget {
	all, cancelAll := context.WithTimeout(context.Background(), askRuleTime-took)
	main, cancelMain := context.WithTimeout(all, askRuleTime-askRuleTime/4-took)
	return &ruleBudget{all: all, main: main, cancel: func() { cancelMain(); cancelAll() }, spent: spent}
}

// within runs route's rules over in within b: the ruleStep of an ask
// whose rules run all at once.
func (b *ruleBudget) within(route Route, in AskInput) RuleVerdict {
	return evalRules(route, in, b)
}

// heldBudget is one ask's budget across runs of its rules with other
// work between them (a door's reads of the store, under a Pinned): the
// cost and the time its rules have spent so far. Its time runs only
// while they run, so a slow store between two runs leaves the later
// rules, a deny among them, the time a single run would have had.
type heldBudget struct {
	spent uint64
	took  time.Duration
}

// within runs route's rules over in within what is left of h.
func (h *heldBudget) within(route Route, in AskInput) RuleVerdict {
	b := resumeRuleBudget(h.spent, h.took)
	defer b.cancel()
	start := time.Now()
	v := evalRules(route, in, b)
	h.spent, h.took = b.spent, h.took+time.Since(start)
	return v
}

// eval evaluates prg over vars within b, from the reserve too when
// reserve (pastBroken). An evaluation b leaves no room for, or that runs
// out of its time, is an error saying so, whatever prg made of it (an
// interrupted comprehension may leave an outcome that one error did not
// decide).
func (b *ruleBudget) eval(prg cel.Program, vars any, reserve bool) (ref.Val, *cel.EvalDetails, error) {
	ctx, limit, took := b.main, uint64(askRuleCost-askRuleCost/4), askRuleTime-askRuleTime/4
	if reserve {
		ctx, limit, took = b.all, askRuleCost, askRuleTime
	}
	if b.spent >= limit {
		return nil, nil, budgetError(strconv.FormatUint(limit, 10) + " in cost")
	}
	if ctx.Err() != nil {
		return nil, nil, budgetError(took.String())
	}
	out, det, err := prg.ContextEval(ctx, vars)
	if c := det.ActualCost(); c != nil {
		b.spent += *c
	}
	if ctx.Err() != nil {
		return nil, det, budgetError(took.String())
	}
	return out, det, err
}

// match reports whether r's condition holds for vars, evaluated within b
// (eval).
func (b *ruleBudget) match(r *Rule, vars map[string]any, reserve bool) (bool, error) {
	out, _, err := b.eval(r.prg, vars, reserve)
	return err == nil && out.Value() == true, err
}

// budgetError is the error of a condition the budget stopped: how much
// of its cost or time the rules had, and used up.
func budgetError(limit string) error {
	return errors.New("not evaluated: the rules of this ask used up their budget of " + limit)
}

// A regular expression's work is what CEL's cost model misjudges most:
// it prices a match by the pattern's length, once the match has run,
// while Go's matcher takes up to the text's length times the compiled
// pattern's instructions, and (a?){1000} is 10 characters and 4000
// instructions. So a condition's matches are planned as boundedMatch:
// each is priced from the text and the compiled pattern before it runs,
// and refused past matchSteps, as the cost limit stops a condition; a
// pattern written in the condition is compiled once, when the rules
// load; and an evaluation out of time (ruleBudget) stops before the next
// match, which CEL's own interrupt checks only do between the rounds of
// a comprehension.

// matchSteps caps one match's work: the text's length in bytes, plus
// one, times the compiled pattern's instructions. 8M steps take Go's
// matcher 0.1-0.2 s at worst; README's starter patterns (about 100
// instructions) stay under it over arguments of the largest size an
// ask takes (MaxArgumentsLen).
const matchSteps = 1 << 23

// matchInsts caps the instructions of a pattern taken at the ask (from
// the arguments, say), which is compiled at each match: compiling is
// itself work the size of the program, and a 16 KiB pattern can compile
// to two million instructions.
const matchInsts = 1 << 14

// patternOptions are the program options a condition's matches need:
// bounded (boundMatches), and checked for the evaluation's time at each
// match and each round of a comprehension.
var patternOptions = []cel.ProgramOption{cel.CustomDecoratorV2(boundMatches), cel.InterruptCheckFrequency(1)}

// boundMatches plans each call of matches as a boundedMatch, compiling a
// pattern written in the condition once, when the program is made, and
// refusing the program for one that does not compile (badPattern has
// named its place by then): else cel-go compiles it at every evaluation,
// and a pattern RE2 cannot read (a PCRE lookahead, a backreference)
// loads, and fails its rule at every ask instead.
func boundMatches(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	call, ok := i.(interpreter.InterpretableCall)
	if !ok || call.Function() != "matches" || len(call.Args()) != 2 {
		return i, nil
	}
	m := &boundedMatch{}
	if c, ok := call.Args()[1].(interpreter.InterpretableConst); ok {
		if p, ok := c.Value().(types.String); ok {
			re, insts, err := compilePattern(string(p))
			if err != nil {
				return nil, err
			}
			m.re, m.insts = re, insts
		}
	}
	// A call of NewCall evaluates the arguments, passes on an error or
	// an unknown, and charges CEL's cost of the match as before.
	m.InterpretableCall = interpreter.NewCall(call.ID(), call.Function(), call.OverloadID(), call.Args(), m.match)
	return m, nil
}

// boundedMatch is one call of matches, its pattern compiled (re, of
// insts instructions) when the condition writes it.
type boundedMatch struct {
	interpreter.InterpretableCall
	re    *regexp.Regexp
	insts int
}

// Exec stops an evaluation out of time before the match, as the rounds
// of a comprehension are stopped: a panic that the program's evaluation
// returns as its error, as it does the cost limit's.
func (m *boundedMatch) Exec(f *interpreter.ExecutionFrame) ref.Val {
	if f.CheckInterrupt() {
		panic(interpreter.EvalCancelledError{Cause: interpreter.ContextCancelled, Message: "operation interrupted"})
	}
	return m.InterpretableCall.Exec(f)
}

// Eval is Exec over an activation.
func (m *boundedMatch) Eval(a interpreter.Activation) ref.Val {
	return interpreter.EvalActivation(a, m.Exec)
}

// match matches the text against the pattern, unless that is past
// matchSteps.
func (m *boundedMatch) match(args ...ref.Val) ref.Val {
	text, ok := args[0].(types.String)
	if !ok {
		return types.NoSuchOverloadErr()
	}
	re, insts := m.re, m.insts
	if re == nil {
		p, ok := args[1].(types.String)
		if !ok {
			return types.NoSuchOverloadErr()
		}
		var err error
		if re, insts, err = patternAt(string(p)); err != nil {
			return types.WrapErr(err)
		}
	}
	if steps := (len(text) + 1) * insts; steps > matchSteps {
		return types.NewErr("matches: a pattern of %d instructions over %d bytes is past the limit of %d steps", insts, len(text), matchSteps)
	}
	return types.Bool(re.MatchString(string(text)))
}

// compilePattern compiles p, written in a condition, and counts its
// instructions.
func compilePattern(p string) (*regexp.Regexp, int, error) {
	parsed, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return nil, 0, err
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil, 0, err
	}
	re, err := regexp.Compile(p)
	return re, len(prog.Inst), err
}

// patternAt compiles p, taken at the ask, with its instructions
// estimated from the parsed pattern (estimateInsts): one past matchInsts
// is refused before it is compiled.
func patternAt(p string) (*regexp.Regexp, int, error) {
	parsed, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return nil, 0, fmt.Errorf("matches: %w", err)
	}
	n := 4 + estimateInsts(parsed) // and the program's start, match and capture 0
	if n > matchInsts {
		return nil, 0, fmt.Errorf("matches: a pattern of about %d instructions is past the limit of %d for one the ask gives", n, matchInsts)
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, 0, fmt.Errorf("matches: %w", err)
	}
	return re, n, nil
}

// estimateInsts is about how many instructions re compiles to, without
// compiling it, and no fewer than Go's compiler lays out: a repeat counts
// its body as many times as it may repeat. It saturates past matchSteps.
func estimateInsts(re *syntax.Regexp) int {
	sum := func(subs []*syntax.Regexp) int {
		n := 0
		for _, s := range subs {
			n = min(n+estimateInsts(s), matchSteps+1)
		}
		return n
	}
	switch re.Op {
	case syntax.OpLiteral:
		return max(len(re.Rune), 1)
	case syntax.OpCapture, syntax.OpStar:
		return 2 + sum(re.Sub)
	case syntax.OpPlus, syntax.OpQuest:
		return 1 + sum(re.Sub)
	case syntax.OpConcat:
		return sum(re.Sub)
	case syntax.OpAlternate:
		return sum(re.Sub) + len(re.Sub)
	case syntax.OpRepeat:
		times := re.Max
		if times < 0 {
			times = re.Min + 1
		}
		return min((sum(re.Sub)+1)*max(times, 1), matchSteps+1)
	}
	return 1
}

package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"time"
)

// Ask validates in and parks it: the question, its asked event and one post
// delivery per room of its route are stored in one step (law 3).
func (s *Service) Ask(ctx context.Context, in AskInput) (*Question, error) {
	q, _, err := s.AskOrRepeat(ctx, in)
	return q, err
}

// AskOrRepeat is Ask, and reports whether the ask was a repeat of one
// already parked (same agent, run and tool call id, or, without one, same
// agent and Idempotency-Key): then q is that question as stored, nothing new is parked,
// and a repeat with a different body is a CodeConflict error instead.
//
// An ask is three steps: planAsk decides, with no I/O, what question the
// input makes under its route's rules (newQuestion); shortcutsOf reads
// what may close it at once (a rule's allow or deny, a standing approval,
// a batch's calls decided at the ask); then the question is stored with
// its asked event and, unless a shortcut closes it, its cards, and the
// shortcut closes it through the chokepoint.
func (s *Service) AskOrRepeat(ctx context.Context, in AskInput) (*Question, bool, error) {
	return s.askBy(ctx, in, s.planAsk)
}

// askBy is AskOrRepeat with its first step made by plan: planAsk, under
// the configuration in force, or a Pinned's, under the one it holds.
func (s *Service) askBy(ctx context.Context, in AskInput, plan func(AskInput) (askPlan, error)) (q *Question, repeat bool, err error) {
	const op = "ask"
	defer func() { s.observeAsk(q, repeat, err) }()
	ctx, endTrace := s.traceAsk(ctx)
	defer func() { endTrace(q, repeat, err) }()
	p, err := plan(in)
	if err != nil {
		return nil, false, err
	}
	q = p.q
	q.TraceParent = s.traceParentOf(ctx)
	cut, err := s.shortcutsOf(ctx, p)
	if err != nil {
		return nil, false, err
	}
	asked := Event{
		QuestionID: q.ID, RunID: q.RunID, At: q.CreatedAt, Kind: EventAsked,
		Actor: s.pseudonym(Decider{Surface: SurfaceAgent, ID: string(q.Agent)}), Surface: SurfaceAgent,
		Reason: p.verdict.askedReason() + callsReason(p.calls, p.in.Calls),
	}
	var out []Delivery
	if !cut.closesAll(q) {
		out = s.deliveries(q, p.route, DeliverPost, "post", q.CreatedAt)
	}
	if err := s.store.Create(ctx, q, asked, out); err != nil {
		if dup, ok := errors.AsType[*DuplicateError](err); ok {
			q, err := repeatOf(p.in, p.q.Idempotency, p.sent, dup)
			if err == nil && q.Open() {
				// The first ask stored the question but may not have lived
				// to close it as its policy rules or a standing approval
				// decided (a failover failed the close, or the replica
				// stopped): this one does, as far as the rules decide now
				// as they did then (a reload may have changed them since)
				// and by the standing approvals that covered it then. One
				// granted since is not applied: the question was asked
				// before it.
				q, err = settled(s.closeAtAsk(ctx, q, p, cut.again(q, p.verdict.Use)))
			}
			return q, err == nil, err
		}
		if ErrorCode(err) == CodeConflict {
			return nil, false, Errorf(CodeConflict, op, "%s", ErrorMessage(err))
		}
		return nil, false, Internal(op, err)
	}
	if q, err = settled(s.closeAtAsk(ctx, q, p, cut)); err != nil {
		return nil, false, err
	}
	return q, false, nil
}

// settled is what an ask gets of closeAtAsk: a question that a repeat of
// the same ask, racing this one, closed first (or that anything else
// closed) is the ask's answer as it stands, not an error: the agent's own
// allowed call must not come back as a 409.
func settled(q *Question, err error) (*Question, error) {
	if closed, ok := errors.AsType[*ClosedError](err); ok {
		return closed.Question, nil
	}
	return q, err
}

// again is what of the shortcuts a repeat of the ask that parked q (still
// open) applies: the rules' verdicts that decide as they did when q was
// asked (asked, the rule that decided it now), and the standing
// approvals that covered it then (granted no later than q was asked).
func (c askShortcuts) again(q *Question, asked RuleUse) askShortcuts {
	then := func(st Standing) bool { return !st.GrantedAt.After(q.CreatedAt) }
	out := askShortcuts{decided: c.decided && decidesAlike(q.Rule, asked), ruled: stillRuled(q, c.ruled)}
	if c.standing != nil && then(*c.standing) {
		out.standing = c.standing
	}
	for i, st := range c.covered {
		if _, ruled := out.ruled[i]; !ruled && then(st) {
			if out.covered == nil {
				out.covered = map[int]Standing{}
			}
			out.covered[i] = st
		}
	}
	return out
}

// stillRuled is the calls of ruled that q has no answer for yet and that
// a rule decided alike when q was asked.
func stillRuled(q *Question, ruled map[int]RuleVerdict) map[int]RuleVerdict {
	out := map[int]RuleVerdict{}
	for i, v := range ruled {
		if _, done := q.Answered(q.Calls[i].ToolCallID); !done && decidesAlike(q.Calls[i].Rule, v.Use) {
			out[i] = v
		}
	}
	return out
}

// decidesAlike reports whether a rule decided the question (or a call)
// at its ask, as asked records (allow or deny: no person may decide it
// then, so a repeat of the ask must), and the rule deciding it now
// decides the same. It need not be the same rule: a reload that adds or
// removes a rule before it moves it (RuleUse.Index), and the question
// would then wait for its deadline with nobody able to decide it. A rule
// that decides now what people were asked then closes nothing.
func decidesAlike(asked *RuleUse, now RuleUse) bool {
	return asked.decides() && asked.Decide == now.Decide
}

// closeAtAsk closes q, just stored (or found stored by a repeat of its
// ask), as the shortcuts say, through the chokepoint; q as it is if they
// close nothing.
func (s *Service) closeAtAsk(ctx context.Context, q *Question, p askPlan, cut askShortcuts) (*Question, error) {
	switch {
	case cut.decided:
		return s.closeByRule(ctx, q, p.verdict)
	case cut.standing != nil:
		return s.closeByStanding(ctx, q, cut.standing)
	case len(cut.covered) > 0 || len(cut.ruled) > 0:
		return s.decideAtAsk(ctx, q, cut.ruled, cut.covered)
	}
	return q, nil
}

// askPlan is what an ask decided before it touches the store: the input
// as the route's rules left it, its route, the rules' verdicts on the
// question and on each call of a batch, and the question it makes.
type askPlan struct {
	in      AskInput
	route   Route
	verdict RuleVerdict
	calls   []RuleVerdict
	q       *Question
	// sent is the ask's fingerprint as spelled (idempotencyOf).
	sent string
}

// planAsk applies the defaults, checks the input, runs the route's policy
// rules (law 13: allow and deny close the question at once, ask reshapes
// it, after which it is checked as any ask is; applyRules, which also runs
// the rules of a route an ask rule sends it to) and makes the question. It
// does no I/O. The configuration in force is read once for the whole
// ask, even across a reload, and its rules have a budget of their own.
func (s *Service) planAsk(in AskInput) (askPlan, error) {
	b := newRuleBudget()
	defer b.cancel()
	return s.planAskOn(s.conf(), in, b.within)
}

// planAskOn is planAsk under the configuration b, each route's rules run
// by step (applyRulesBy).
func (s *Service) planAskOn(b *bound, in AskInput, step ruleStep) (askPlan, error) {
	const op = "ask"
	if in.Route == "" {
		in.Route = DefaultRoute
	}
	if in.OnTimeout == "" {
		in.OnTimeout = OnTimeoutDeny
	}
	if err := in.Validate(); err != nil {
		return askPlan{}, err
	}
	// The ask as the agent made it is what a repeat of it is compared
	// with: the rules in force may have changed by then (a reload).
	idem, sent, err := idempotencyOf(in)
	if err != nil {
		return askPlan{}, err
	}
	route, ok := b.cfg.Routes[in.Route]
	if !ok {
		return askPlan{}, Errorf(CodeInvalid, op, "route %q is not configured", in.Route)
	}
	asked := in.Route
	rs, err := applyRulesBy(b.cfg.Routes, route, in, step)
	if err != nil {
		return askPlan{}, err
	}
	in, verdict, calls := rs.in, rs.verdict, rs.calls
	if rs.reshaped {
		if err := in.Validate(); err != nil {
			return askPlan{}, err
		}
		if route, ok = b.cfg.Routes[in.Route]; !ok {
			return askPlan{}, Errorf(CodeInvalid, op, "route %q is not configured", in.Route)
		}
		if err := rs.escalation(asked, route); err != nil {
			return askPlan{}, err
		}
	}
	q, err := s.newQuestion(b, in, idem, route, verdict, calls)
	if err != nil {
		return askPlan{}, err
	}
	return askPlan{in: in, route: route, verdict: verdict, calls: calls, q: q, sent: sent}, nil
}

// newQuestion is the open question a checked input makes on its route,
// under the configuration b in force (whose copy of the route the
// question keeps, so a reload leaves it the route it was asked under):
// its deadline, quorum and shard (idem's, when the ask has one), and for
// an approval its call (or a batch's calls) hashed, with the standing
// approvals the route offers and the rules that applied.
func (s *Service) newQuestion(b *bound, in AskInput, idem *Idempotency, route Route, verdict RuleVerdict, calls []RuleVerdict) (*Question, error) {
	const op = "ask"
	if in.OnTimeout == OnTimeoutEscalate && route.EscalateTo == "" {
		return nil, Errorf(CodeInvalid, op, "on_timeout escalate needs route %q to name escalate_to", in.Route)
	}
	timeout := in.Timeout
	if timeout == 0 {
		timeout = b.cfg.DefaultTimeout
	}
	switch {
	case timeout <= b.cfg.MaxTimeout:
	case in.HostPrompt: // the hook's wait, not the asker's word (AskInput.HostPrompt)
		timeout = b.cfg.MaxTimeout
	default:
		return nil, Errorf(CodeInvalid, op, "timeout %s is longer than the limit %s", timeout, b.cfg.MaxTimeout)
	}
	if in.OnTimeout == OnTimeoutReask && in.MaxReasks == 0 {
		in.MaxReasks = 1
	}
	callback, err := callbackOf(&b.cfg, in, route)
	if err != nil {
		return nil, err
	}
	quorum, err := s.quorumOf(in, route)
	if err != nil {
		return nil, err
	}
	shard := mrand.IntN(b.cfg.Shards)
	if idem != nil {
		shard = idem.shard(b.cfg.Shards)
	}
	now := s.now()
	q := &Question{
		ID:            NewID(shard),
		Kind:          in.Kind,
		Agent:         in.Agent,
		RunID:         in.RunID,
		ToolCallID:    in.ToolCallID,
		HostPrompt:    in.HostPrompt,
		Labels:        in.Labels,
		Text:          in.Text,
		Context:       in.Context,
		Reversibility: in.Reversibility,
		Route:         in.Route,
		AskedRoute:    json.RawMessage(b.pinned[route.Name]),
		Options:       in.Options,
		Items:         in.Items,
		CreatedAt:     now,
		Deadline:      now.Add(timeout),
		Timeout:       Duration(timeout),
		OnTimeout:     in.OnTimeout,
		MaxReasks:     in.MaxReasks,
		Quorum:        quorum,
		State:         StateOpen,
		Idempotency:   idem,
		CallbackURL:   callback,
	}
	if verdict.Rule != nil {
		use := verdict.Use
		q.Rule = &use
	}
	switch {
	case in.Kind == KindApproval && len(in.Calls) > 0:
		if q.Calls, err = batchCalls(in.Calls); err != nil {
			return nil, err
		}
		batchOffers(q, route)
		for i, v := range calls {
			if v.Rule != nil {
				use := v.Use
				q.Calls[i].Rule = &use
			}
		}
	case in.Kind == KindApproval:
		sum, canon, err := HashArguments(in.Arguments)
		if err != nil {
			return nil, err
		}
		q.Call = &ToolCall{Tool: in.Tool, Arguments: canon, ArgumentsSHA256: sum}
		if in.Editable.Any() {
			q.Call.Editable = in.Editable
		}
		q.Call.Standing = standingOffer(q, route)
	}
	return q, nil
}

// askShortcuts is what closes a new question, or some of a batch's calls,
// at once, without a person.
type askShortcuts struct {
	// decided: a policy rule allowed or denied the question.
	decided bool
	// standing is the standing approval that covers the call.
	standing *Standing
	// ruled are a batch's calls a rule allowed or denied, covered those
	// a standing approval covers (none of them ruled).
	ruled   map[int]RuleVerdict
	covered map[int]Standing
}

// closesAll reports whether the shortcuts close q at once, so that it is
// parked without cards. Should the bridge stop between parking and
// closing, the question stays open without cards until the agent's repeat
// of the ask closes it as the rules decided, or until its deadline (the
// agent hears it timed out): nothing is reported approved that was not,
// and no person decides what a rule decided (RuleUse.decides).
func (c askShortcuts) closesAll(q *Question) bool {
	return c.decided || c.standing != nil || q.IsBatch() && len(c.covered)+len(c.ruled) == len(q.Calls)
}

// shortcutsOf reads the standing approvals that cover the new question,
// or what is left of a batch after its calls' rules, unless a rule
// already decided it.
func (s *Service) shortcutsOf(ctx context.Context, p askPlan) (askShortcuts, error) {
	c := askShortcuts{decided: p.verdict.Rule != nil && p.verdict.Rule.Decide != DecideAsk, ruled: map[int]RuleVerdict{}}
	var err error
	// A call whose rules stopped at one that could not be evaluated (and
	// that no later deny denied) goes to a person: the rules after it
	// never all ran, so no standing approval may cover it.
	if !c.decided && p.verdict.Err == nil {
		if c.standing, err = s.standingFor(ctx, p.q, p.route); err != nil {
			return askShortcuts{}, err
		}
	}
	for i, v := range p.calls {
		if v.Rule != nil && v.Rule.Decide != DecideAsk {
			c.ruled[i] = v
		}
	}
	if c.covered, err = s.batchCovered(ctx, p.q, p.route); err != nil {
		return askShortcuts{}, err
	}
	for i, v := range p.calls {
		if c.ruled[i].Rule != nil || v.Err != nil {
			delete(c.covered, i)
		}
	}
	return c, nil
}

// roomDeliveries is one delivery per room of route. The key is stable for
// the same question, purpose and room, so a repeat is recognisable.
func roomDeliveries(q *Question, route Route, kind DeliveryKind, purpose string, now time.Time) []Delivery {
	posts := route.Posts()
	out := make([]Delivery, 0, len(posts))
	for _, room := range posts {
		out = append(out, Delivery{
			Key:        fmt.Sprintf("%s:%s:%s:%s", q.ID, purpose, room.Surface, room.ID),
			Kind:       kind,
			Surface:    room.Surface,
			Room:       room.ID,
			QuestionID: q.ID,
			Route:      route.Name,
			CreatedAt:  now,
		})
	}
	return out
}

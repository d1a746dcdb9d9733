package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"time"
)

// AskInput is what an agent sends to park a question. Validate checks it
// whole before anything is stored.
type AskInput struct {
	Kind          Kind
	Agent         string
	RunID         string
	ToolCallID    string
	Labels        Labels
	Text          string
	Context       string
	Reversibility Reversibility
	Route         string // "" is the default route
	Options       []Option
	Items         []FormItem
	Tool          string
	Arguments     json.RawMessage
	// Editable lets an approver change these arguments (all, or some
	// top-level keys) before approving. Like Calls and Quorum, it is left
	// out of the idempotency fingerprint when unset.
	Editable *Editable `json:",omitempty"`
	// Calls makes the approval a batch of 2 to 20 tool calls, each with
	// its own id, tool and arguments, instead of Tool and Arguments.
	Calls     []CallInput   `json:",omitempty"`
	Timeout   time.Duration // 0 takes the configured default
	OnTimeout TimeoutPolicy // "" is deny
	MaxReasks int           // reask: how many times, 1 if unset
	// Quorum asks for this many different people to agree, within what
	// the route allows; 0 takes the route's. Left out of the idempotency
	// fingerprint when 0, so asks fingerprinted before it existed still
	// match their repeats.
	Quorum int `json:",omitempty"`
	// IdempotencyKey is the caller's own key for asks that have no tool
	// call id: repeats with the same key (by the same agent) get the first
	// question back. See Idempotency.
	IdempotencyKey string
}

// Validate reports the first rule the input breaks, as a CodeInvalid error
// whose message names the field.
func (in AskInput) Validate() error {
	const op = "ask"
	if _, err := ParseKind(string(in.Kind)); err != nil {
		return Errorf(CodeInvalid, op, "kind %q is not one of clarification, decision, approval, form", in.Kind)
	}
	if _, err := ParseReversibility(string(in.Reversibility)); err != nil {
		return Errorf(CodeInvalid, op, "%s", ErrorMessage(err))
	}
	for _, f := range []struct {
		name, v  string
		required bool
	}{
		{"agent", in.Agent, true}, {"run_id", in.RunID, true}, {"tool_call_id", in.ToolCallID, false},
		{"labels.project", in.Labels.Project, false}, {"labels.task", in.Labels.Task, false}, {"route", in.Route, false},
	} {
		if err := checkID(op, f.name, f.v, f.required); err != nil {
			return err
		}
	}
	if err := checkLen(op, "Idempotency-Key", in.IdempotencyKey, MaxIdempotencyKeyLen); err != nil {
		return err
	}
	if blank(in.Text) {
		return Errorf(CodeInvalid, op, "question must not be blank")
	}
	if err := checkLen(op, "question", in.Text, MaxTextLen); err != nil {
		return err
	}
	if err := checkLen(op, "context", in.Context, MaxContextLen); err != nil {
		return err
	}
	if in.Timeout < 0 {
		return Errorf(CodeInvalid, op, "timeout must not be negative")
	}
	if _, err := ParseTimeoutPolicy(string(in.OnTimeout)); err != nil {
		return Errorf(CodeInvalid, op, "%s", ErrorMessage(err))
	}
	if in.MaxReasks < 0 || in.MaxReasks > MaxReasks {
		return Errorf(CodeInvalid, op, "max_reasks must be between 0 and %d", MaxReasks)
	}
	if in.MaxReasks > 0 && in.OnTimeout != OnTimeoutReask {
		return Errorf(CodeInvalid, op, "max_reasks applies only to on_timeout reask")
	}

	// Each kind takes its own fields and refuses the others', so a client
	// that mixes them up hears about it instead of having fields ignored.
	hasOptions, hasItems, hasTool := len(in.Options) > 0, len(in.Items) > 0, in.Tool != "" || len(in.Arguments) > 0 || len(in.Calls) > 0
	if in.Editable.Any() && in.Kind != KindApproval {
		return Errorf(CodeInvalid, op, "only an approval's arguments can be editable")
	}
	switch in.Kind {
	case KindClarification:
		if hasOptions || hasItems || hasTool {
			return Errorf(CodeInvalid, op, "a clarification takes no options, items, tool or arguments")
		}
	case KindDecision:
		if hasItems || hasTool {
			return Errorf(CodeInvalid, op, "a decision takes options, not items, tool or arguments")
		}
		return validateOptions(in.Options)
	case KindApproval:
		if hasOptions || hasItems {
			return Errorf(CodeInvalid, op, "an approval takes a tool and arguments, not options or items")
		}
		if len(in.Calls) > 0 {
			if in.Tool != "" || len(in.Arguments) > 0 || in.Editable != nil {
				return Errorf(CodeInvalid, op, "a batch takes calls, each with its own tool, arguments and editable keys, not tool or arguments of its own")
			}
			return validateCalls(in.Calls)
		}
		if blank(in.Tool) {
			return Errorf(CodeInvalid, op, "tool is required for an approval")
		}
		if err := checkLen(op, "tool", in.Tool, MaxToolLen); err != nil {
			return err
		}
		if len(in.Arguments) == 0 {
			return Errorf(CodeInvalid, op, "arguments are required for an approval (use {} for none)")
		}
		if len(in.Arguments) > MaxArgumentsLen {
			return Errorf(CodeInvalid, op, "arguments are %d bytes; the limit is %d", len(in.Arguments), MaxArgumentsLen)
		}
		if _, err := CanonicalArguments(in.Arguments); err != nil {
			return Errorf(CodeInvalid, op, "%s", ErrorMessage(err))
		}
		if err := in.Editable.validate(in.Arguments); err != nil {
			return err
		}
	case KindForm:
		if hasOptions || hasTool {
			return Errorf(CodeInvalid, op, "a form takes items, not options, tool or arguments")
		}
		return validateItems(in.Items)
	}
	return nil
}

func validateOptions(opts []Option) error {
	const op = "ask"
	if len(opts) < 2 {
		return Errorf(CodeInvalid, op, "a decision needs at least 2 options, got %d", len(opts))
	}
	if len(opts) > MaxOptions {
		return Errorf(CodeInvalid, op, "a decision takes at most %d options, got %d", MaxOptions, len(opts))
	}
	seen := map[string]bool{}
	recommended := 0
	for i, o := range opts {
		field := fmt.Sprintf("options[%d]", i)
		if err := checkID(op, field+".id", o.ID, true); err != nil {
			return err
		}
		if seen[o.ID] {
			return Errorf(CodeInvalid, op, "%s.id %q is used twice", field, o.ID)
		}
		seen[o.ID] = true
		if blank(o.Title) {
			return Errorf(CodeInvalid, op, "%s.title is required", field)
		}
		if err := checkLen(op, field+".title", o.Title, MaxTitleLen); err != nil {
			return err
		}
		if blank(o.Writeup) {
			return Errorf(CodeInvalid, op, "%s.writeup is required: say what choosing it trades off", field)
		}
		if err := checkLen(op, field+".writeup", o.Writeup, MaxWriteupLen); err != nil {
			return err
		}
		if o.Recommended {
			recommended++
		}
	}
	if recommended != 1 {
		return Errorf(CodeInvalid, op, "a decision needs exactly one recommended option, got %d", recommended)
	}
	return nil
}

func validateItems(items []FormItem) error {
	const op = "ask"
	if len(items) < 1 || len(items) > MaxItems {
		return Errorf(CodeInvalid, op, "a form takes 1 to %d items, got %d", MaxItems, len(items))
	}
	seen := map[string]bool{}
	for i, it := range items {
		field := fmt.Sprintf("items[%d]", i)
		if err := checkID(op, field+".id", it.ID, true); err != nil {
			return err
		}
		if seen[it.ID] {
			return Errorf(CodeInvalid, op, "%s.id %q is used twice", field, it.ID)
		}
		seen[it.ID] = true
		if blank(it.Question) {
			return Errorf(CodeInvalid, op, "%s.question is required", field)
		}
		if err := checkLen(op, field+".question", it.Question, MaxTextLen); err != nil {
			return err
		}
		if len(it.Options) < MinItemOptions || len(it.Options) > MaxItemOptions {
			return Errorf(CodeInvalid, op, "%s takes %d to %d options, got %d", field, MinItemOptions, MaxItemOptions, len(it.Options))
		}
		optSeen := map[string]bool{}
		recommended := 0
		for j, o := range it.Options {
			of := fmt.Sprintf("%s.options[%d]", field, j)
			if err := checkID(op, of+".id", o.ID, true); err != nil {
				return err
			}
			if optSeen[o.ID] {
				return Errorf(CodeInvalid, op, "%s.id %q is used twice", of, o.ID)
			}
			optSeen[o.ID] = true
			if blank(o.Label) {
				return Errorf(CodeInvalid, op, "%s.label is required", of)
			}
			if err := checkLen(op, of+".label", o.Label, MaxTitleLen); err != nil {
				return err
			}
			if err := checkLen(op, of+".description", o.Description, MaxWriteupLen); err != nil {
				return err
			}
			if o.Recommended {
				recommended++
			}
		}
		if recommended > 1 {
			return Errorf(CodeInvalid, op, "%s has %d recommended options; at most one", field, recommended)
		}
	}
	return nil
}

// Ask validates in and parks it: the question, its asked event and one post
// delivery per room of its route are stored in one step (law 3).
func (s *Service) Ask(ctx context.Context, in AskInput) (*Question, error) {
	q, _, err := s.AskOrRepeat(ctx, in)
	return q, err
}

// AskOrRepeat is Ask, and reports whether the ask was a repeat of one
// already parked (same agent and Idempotency-Key, or same agent, run and
// tool call id): then q is that question as stored, nothing new is parked,
// and a repeat with a different body is a CodeConflict error instead.
func (s *Service) AskOrRepeat(ctx context.Context, in AskInput) (q *Question, repeat bool, err error) {
	const op = "ask"
	defer func() { s.observeAsk(q, repeat, err) }()
	if in.Route == "" {
		in.Route = DefaultRoute
	}
	if in.OnTimeout == "" {
		in.OnTimeout = OnTimeoutDeny
	}
	if err := in.Validate(); err != nil {
		return nil, false, err
	}
	b := s.conf() // one configuration for the whole ask, even across a reload
	cfg := &b.cfg
	route, ok := cfg.Routes[in.Route]
	if !ok {
		return nil, false, Errorf(CodeInvalid, op, "route %q is not configured", in.Route)
	}
	// The route's policy rules come first (law 13): allow and deny close
	// the question below, and ask reshapes it, after which it is checked
	// as any ask is.
	verdict, calls := evalRules(route, in), callVerdicts(route, in)
	reshaped, err := shapeBatch(&in, calls)
	if err != nil {
		return nil, false, err
	}
	if r := verdict.Rule; r != nil && r.Decide == DecideAsk {
		r.shape(&in)
		reshaped = true
	}
	if reshaped {
		if err := in.Validate(); err != nil {
			return nil, false, err
		}
		if route, ok = cfg.Routes[in.Route]; !ok {
			return nil, false, Errorf(CodeInvalid, op, "route %q is not configured", in.Route)
		}
	}
	if in.OnTimeout == OnTimeoutEscalate && route.EscalateTo == "" {
		return nil, false, Errorf(CodeInvalid, op, "on_timeout escalate needs route %q to name escalate_to", in.Route)
	}
	timeout := in.Timeout
	if timeout == 0 {
		timeout = cfg.DefaultTimeout
	}
	if timeout > cfg.MaxTimeout {
		return nil, false, Errorf(CodeInvalid, op, "timeout %s is longer than the limit %s", timeout, cfg.MaxTimeout)
	}
	if in.OnTimeout == OnTimeoutReask && in.MaxReasks == 0 {
		in.MaxReasks = 1
	}

	quorum, err := s.quorumOf(in, route)
	if err != nil {
		return nil, false, err
	}
	idem, err := idempotencyOf(in)
	if err != nil {
		return nil, false, err
	}
	shard := mrand.IntN(cfg.Shards)
	if idem != nil {
		shard = idem.shard(cfg.Shards)
	}
	now := s.now()
	q = &Question{
		ID:            NewID(shard),
		Kind:          in.Kind,
		Agent:         in.Agent,
		RunID:         in.RunID,
		ToolCallID:    in.ToolCallID,
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
	}
	if verdict.Rule != nil {
		use := verdict.Use
		q.Rule = &use
	}
	if in.Kind == KindApproval && len(in.Calls) > 0 {
		if q.Calls, err = batchCalls(in.Calls); err != nil {
			return nil, false, err
		}
		batchOffers(q, route)
		for i, v := range calls {
			if v.Rule != nil {
				use := v.Use
				q.Calls[i].Rule = &use
			}
		}
	} else if in.Kind == KindApproval {
		sum, canon, err := HashArguments(in.Arguments)
		if err != nil {
			return nil, false, err
		}
		q.Call = &ToolCall{Tool: in.Tool, Arguments: canon, ArgumentsSHA256: sum}
		if in.Editable.Any() {
			q.Call.Editable = in.Editable
		}
		q.Call.Standing = standingOffer(q, route)
	}
	asked := Event{
		QuestionID: q.ID, RunID: q.RunID, At: now, Kind: EventAsked,
		Actor: s.pseudonym(Decider{Surface: SurfaceAgent, ID: q.Agent}), Surface: SurfaceAgent,
		Reason: verdict.askedReason() + callsReason(calls, in.Calls),
	}
	decided := verdict.Rule != nil && verdict.Rule.Decide != DecideAsk
	// A policy rule's allow or deny, or else a standing approval that
	// covers the call, closes it at once: it is parked without cards,
	// then closed through the chokepoint. Should the bridge stop in
	// between, the question stays open without cards until its deadline,
	// and the agent hears it timed out: nothing is reported approved that
	// was not.
	var st *Standing
	if !decided {
		if st, err = s.standingFor(ctx, q, route); err != nil {
			return nil, false, err
		}
	}
	// A batch's calls a rule allows or denies are decided at the ask;
	// standing approvals cover what is left of them.
	ruled := map[int]RuleVerdict{}
	for i, v := range calls {
		if v.Rule != nil && v.Rule.Decide != DecideAsk {
			ruled[i] = v
		}
	}
	covered, err := s.batchCovered(ctx, q)
	if err != nil {
		return nil, false, err
	}
	for i := range ruled {
		delete(covered, i)
	}
	out := append(roomDeliveries(q, route, DeliverPost, "post", now), s.dmDeliveries(q, route, DeliverPost, "post", now)...)
	if decided || st != nil || q.IsBatch() && len(covered)+len(ruled) == len(q.Calls) {
		out = nil
	}
	if err := s.store.Create(ctx, q, asked, out); err != nil {
		if dup, ok := errors.AsType[*DuplicateError](err); ok {
			q, err := repeatOf(in, idem, dup)
			return q, err == nil, err
		}
		if ErrorCode(err) == CodeConflict {
			return nil, false, Errorf(CodeConflict, op, "%s", ErrorMessage(err))
		}
		return nil, false, Internal(op, err)
	}
	if decided {
		closed, err := s.closeByRule(ctx, q, verdict)
		if err != nil {
			return nil, false, err
		}
		return closed, false, nil
	}
	if st != nil {
		closed, err := s.closeByStanding(ctx, q, st)
		if err != nil {
			return nil, false, err
		}
		return closed, false, nil
	}
	if len(covered) > 0 || len(ruled) > 0 {
		after, err := s.decideAtAsk(ctx, q, ruled, covered)
		if err != nil {
			return nil, false, err
		}
		return after, false, nil
	}
	return q, false, nil
}

// roomDeliveries is one delivery per room of route. The key is stable for
// the same question, purpose and room, so a repeat is recognisable.
func roomDeliveries(q *Question, route Route, kind DeliveryKind, purpose string, now time.Time) []Delivery {
	out := make([]Delivery, 0, len(route.Rooms))
	for _, room := range route.Rooms {
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

package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// A batch is an approval of several tool calls at once (an agent's
// parallel calls), posted as one card. Each call is decided on its own,
// recorded through the chokepoint one step at a time the way a form's
// items are, and the batch closes once every call has an outcome. A
// timeout, decline, expiry or cancel closes the whole batch; calls still
// undecided then say so.

// Bounds of a batch.
const (
	MinBatchCalls = 2
	MaxBatchCalls = 20
)

// CallInput is one tool call of a batch ask.
type CallInput struct {
	ToolCallID string          `json:"tool_call_id"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"`
	// Editable lets approvers change this call's arguments (edit.go).
	Editable *Editable `json:"editable,omitempty"`
}

// BatchCall is one tool call of a batch as stored: like ToolCall, with
// the id that binds its outcome to the agent's call.
type BatchCall struct {
	ToolCallID string `json:"tool_call_id"`
	ToolCall
	// Rule is the route's policy rule that matched this call at the ask
	// (rules.go), if one did: it decided the call, or shaped the batch.
	Rule *RuleUse `json:"rule,omitempty"`
}

// CallDecision decides one call of a batch: ApproveOption or DenyOption,
// an optional reason, and for an approve, optionally edited arguments.
type CallDecision struct {
	ToolCallID string          `json:"tool_call_id"`
	OptionID   string          `json:"option_id"`
	Reason     string          `json:"reason,omitempty"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	// Standing, with an approve, also grants a standing approval for
	// this call's tool (standing.go).
	Standing *StandingRequest `json:"standing,omitempty"`
}

// IsBatch reports whether q is a batch of tool calls.
func (q *Question) IsBatch() bool { return len(q.Calls) > 0 }

// PartIDs are the ids of the parts of q that are answered one by one: a
// form's items, or a batch's tool call ids. Stores close q once every one
// has an answer.
func (q *Question) PartIDs() []string {
	ids := make([]string, 0, len(q.Items)+len(q.Calls))
	for _, it := range q.Items {
		ids = append(ids, it.ID)
	}
	for _, c := range q.Calls {
		ids = append(ids, c.ToolCallID)
	}
	return ids
}

// batchCall returns the call with the given tool call id and its index.
func (q *Question) batchCall(id string) (BatchCall, int, bool) {
	for i, c := range q.Calls {
		if c.ToolCallID == id {
			return c, i, true
		}
	}
	return BatchCall{}, -1, false
}

// validateCalls checks a batch ask's calls.
func validateCalls(calls []CallInput) error {
	const op = "ask"
	if len(calls) < MinBatchCalls || len(calls) > MaxBatchCalls {
		return Errorf(CodeInvalid, op, "a batch takes %d to %d tool calls, got %d", MinBatchCalls, MaxBatchCalls, len(calls))
	}
	seen := map[string]bool{}
	for i, c := range calls {
		field := fmt.Sprintf("calls[%d]", i)
		if err := checkID(op, field+".tool_call_id", c.ToolCallID, true); err != nil {
			return err
		}
		if seen[c.ToolCallID] {
			return Errorf(CodeInvalid, op, "%s.tool_call_id %q is used twice", field, c.ToolCallID)
		}
		seen[c.ToolCallID] = true
		if blank(c.Tool) {
			return Errorf(CodeInvalid, op, "%s.tool is required", field)
		}
		if err := checkTool(op, field+".tool", c.Tool); err != nil {
			return err
		}
		if len(c.Arguments) == 0 {
			return Errorf(CodeInvalid, op, "%s.arguments are required (use {} for none)", field)
		}
		if len(c.Arguments) > MaxArgumentsLen {
			return Errorf(CodeInvalid, op, "%s.arguments are %d bytes; the limit is %d", field, len(c.Arguments), MaxArgumentsLen)
		}
		if _, err := CanonicalArguments(c.Arguments); err != nil {
			return Errorf(CodeInvalid, op, "%s.%s", field, ErrorMessage(err))
		}
		if err := checkObject(op, field+".arguments", c.Arguments); err != nil {
			return err
		}
		if err := c.Editable.validate(c.Arguments); err != nil {
			return Errorf(CodeInvalid, op, "%s: %s", field, ErrorMessage(err))
		}
	}
	return nil
}

// batchCalls builds the stored calls of a batch ask.
func batchCalls(in []CallInput) ([]BatchCall, error) {
	out := make([]BatchCall, len(in))
	for i, c := range in {
		sum, canon, err := HashArguments(c.Arguments)
		if err != nil {
			return nil, err
		}
		out[i] = BatchCall{ToolCallID: c.ToolCallID, ToolCall: ToolCall{Tool: c.Tool, Arguments: canon, ArgumentsSHA256: sum}}
		if c.Editable.Any() {
			out[i].Editable = c.Editable
		}
	}
	return out, nil
}

// batchOffers sets what each call of a batch lets its approvers grant: a
// standing approval for the call's tool, on the terms of a single
// approval (never for a hard-to-reverse batch, nor on a route that
// forbids them; a batch never has a quorum, quorumOf refuses it).
func batchOffers(q *Question, route Route) {
	if q.Reversibility != Reversible || !route.StandingAllowed() {
		return
	}
	for i := range q.Calls {
		q.Calls[i].Standing = &StandingOffer{Hours: route.StandingHours}
	}
}

// batchCovered finds, per call of a just-built batch, a live standing
// approval that covers it on route, the route in force.
func (s *Service) batchCovered(ctx context.Context, q *Question, route Route) (map[int]Standing, error) {
	if !q.IsBatch() || q.Calls[0].Standing == nil {
		return nil, nil
	}
	all, err := s.store.ListStandings(ctx, q.CreatedAt)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	covered := map[int]Standing{}
	for i, c := range q.Calls {
		if st := s.covering(all, q, c.ToolCall, route); st != nil {
			covered[i] = *st
		}
	}
	return covered, nil
}

// decideAtAsk records, at once and through the chokepoint, the calls of a
// just-parked batch that were decided before anyone could look: by the
// route's policy rules (ruled) or by standing approvals (covered; a call
// a rule decided is not among them). The batch closes if that is all of
// its calls.
func (s *Service) decideAtAsk(ctx context.Context, q *Question, ruled map[int]RuleVerdict, covered map[int]Standing) (*Question, error) {
	o, err := s.resolve(ctx, attempt{op: "decided at the ask", id: q.ID, door: doorSystem, actor: System,
		build: func(q *Question, now time.Time) (Transition, error) {
			var items []ItemAnswer
			var last Decider
			var byRule, byStanding []string
			for i, c := range q.Calls {
				if _, done := q.Answered(c.ToolCallID); done {
					continue // a repeat of the ask, racing this one, decided it first
				}
				if v, ok := ruled[i]; ok {
					use, opt := v.Use, ApproveOption
					if v.Rule.Decide == DecideDeny {
						opt = DenyOption
					}
					d := publicDecider(System)
					d.Name, last = use.Label(), d
					items = append(items, ItemAnswer{ItemID: c.ToolCallID, OptionID: opt, Text: v.Rule.Reason, Decider: d, At: now, Policy: &use})
					byRule = append(byRule, c.ToolCallID)
					continue
				}
				st, ok := covered[i]
				if !ok || c.Standing == nil || !st.covers(q, c.ToolCall) {
					// Not covered, or parked for people as stored (a
					// repeat of the ask after a reload found st):
					// closeByStanding's rule, per call.
					continue
				}
				d := publicDecider(st.GrantedBy)
				d.Name, last = StandingLabel(st), d
				items = append(items, ItemAnswer{ItemID: c.ToolCallID, OptionID: ApproveOption, Decider: d, At: now,
					Standing: &StandingUse{ID: st.ID, GrantedBy: publicDecider(st.GrantedBy), GrantedAt: st.GrantedAt}})
				byStanding = append(byStanding, c.ToolCallID)
			}
			if len(items) == 0 {
				return Transition{}, errDecidedAlready
			}
			why := "covered by standing approvals"
			switch {
			case len(byStanding) == 0:
				why = "decided by policy rules"
			case len(byRule) > 0:
				why = "decided by policy rules and covered by standing approvals"
			}
			res := &Resolution{State: StateAnswered, ClosedBy: CloserParts, Decider: last, At: now}
			fields := map[string]any{"calls": itemIDs(items)}
			if len(byStanding) > 0 {
				fields["standing"] = true
			}
			if len(byRule) > 0 {
				fields["policy"] = byRule
			}
			payload, _ := json.Marshal(fields)
			return Transition{Items: items, Resolution: res, Event: s.closeEvent(q, res, "every call "+why),
				ItemEvent: Event{QuestionID: q.ID, RunID: q.RunID, At: now, Kind: EventItemAnswered, Surface: SurfaceSystem,
					Reason: why, Payload: payload}}, nil
		}})
	if errors.Is(err, errDecidedAlready) {
		got, err := s.store.Get(ctx, q.ID)
		return got, Internal("ask", err)
	}
	if err != nil {
		return nil, err
	}
	return o.Question, nil
}

// errDecidedAlready is decideAtAsk's build finding every call it would
// decide decided already, by a repeat of the ask that raced it.
var errDecidedAlready = errors.New("every call decided already")

// grantCalls stores the standing approvals a batch's decisions asked for;
// like a single approval's, one that cannot be stored only means people
// are asked again.
func (s *Service) grantCalls(ctx context.Context, q *Question, ds []CallDecision, roles []string) []Standing {
	var out []Standing
	for _, cd := range ds {
		if cd.Standing == nil {
			continue
		}
		call, _, ok := q.batchCall(cd.ToolCallID)
		a, done := q.Answered(cd.ToolCallID)
		if !ok || !done || a.OptionID != ApproveOption {
			continue
		}
		if st, err := s.grant(ctx, q, call.ToolCall, grantBy{Decider: a.Decider, Roles: roles, At: a.At, Edit: a.Edit}, cd.Standing); err == nil {
			out = append(out, *st)
		}
	}
	return out
}

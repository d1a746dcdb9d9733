package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sort"
	"strings"
	"time"
)

// Config is the part of askbridge's configuration that core enforces.
type Config struct {
	// Routes by name. Every question names one; "" means DefaultRoute.
	Routes map[string]Route
	// ActorKey keys the HMAC that names actors in the event log.
	ActorKey []byte
	// DefaultTimeout is a question's deadline when the asker gives none.
	DefaultTimeout time.Duration
	// MaxTimeout caps what an asker may ask for.
	MaxTimeout time.Duration
	// DowntimeThreshold: after a longer gap between heartbeats, open
	// questions are re-notified and a digest is posted at boot.
	DowntimeThreshold time.Duration
	// Retention is how long closed questions and their events are kept.
	Retention time.Duration
	// Shards is how many shards new ids are spread over (1 unless the
	// store runs on a Redis Cluster).
	Shards int
}

// DefaultRoute is the route a question takes when it names none.
const DefaultRoute = "default"

// Defaults for Config's zero values.
const (
	DefaultTimeout           = 24 * time.Hour
	DefaultMaxTimeout        = 30 * 24 * time.Hour
	DefaultDowntimeThreshold = 5 * time.Minute
	DefaultRetention         = 30 * 24 * time.Hour
)

// DeclineReason is what a decline records as its reason. The agent's
// resume text for a decline comes from fence, fenced, not from here.
const DeclineReason = "the decider declined to choose"

// TimeoutReason is the honest account of a timeout: nobody answered, which
// is not the same as a human saying no.
const TimeoutReason = "nobody answered before the deadline"

// ExpiredReason is recorded when a question's run ends while it is open.
const ExpiredReason = "the run this question belonged to has ended"

// Service is core: every door (chat adapters, the API, the CLI, the
// ticker) calls it, and it alone changes questions.
type Service struct {
	store Store
	cfg   Config
	clock Clock
}

// New checks cfg and returns a Service over store.
func New(store Store, cfg Config, clock Clock) (*Service, error) {
	if clock == nil {
		clock = RealClock{}
	}
	if cfg.DefaultTimeout == 0 {
		cfg.DefaultTimeout = DefaultTimeout
	}
	if cfg.MaxTimeout == 0 {
		cfg.MaxTimeout = DefaultMaxTimeout
	}
	if cfg.DowntimeThreshold == 0 {
		cfg.DowntimeThreshold = DefaultDowntimeThreshold
	}
	if cfg.Retention == 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.Shards == 0 {
		cfg.Shards = 1
	}
	if cfg.Shards < 0 || cfg.Shards > MaxShards {
		return nil, fmt.Errorf("core: shards must be between 1 and %d", MaxShards)
	}
	if len(cfg.ActorKey) == 0 {
		return nil, errors.New("core: an actor key is required to digest actors in the event log")
	}
	routes := make(map[string]Route, len(cfg.Routes))
	for name, r := range cfg.Routes {
		r.Name = name
		routes[name] = r
	}
	for name, r := range routes {
		for _, room := range r.Rooms {
			if !room.Surface.IsChat() {
				return nil, fmt.Errorf("core: route %q: rooms[].surface %q is not a chat surface", name, room.Surface)
			}
		}
		if r.EscalateTo != "" {
			if _, ok := routes[r.EscalateTo]; !ok {
				return nil, fmt.Errorf("core: route %q: escalate_to names unknown route %q", name, r.EscalateTo)
			}
		}
	}
	cfg.Routes = routes
	return &Service{store: store, cfg: cfg, clock: clock}, nil
}

// Store returns the store the service runs on, for doors that read
// through it directly (the outbox consumers).
func (s *Service) Store() Store { return s.store }

// Route returns a configured route.
func (s *Service) Route(name string) (Route, bool) {
	r, ok := s.cfg.Routes[name]
	return r, ok
}

// now is the clock's time in the form stores keep: UTC, milliseconds.
func (s *Service) now() time.Time { return s.clock.Now().UTC().Truncate(time.Millisecond) }

func (s *Service) digest(d Decider) string { return ActorDigest(s.cfg.ActorKey, d) }

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
	if in.Route == "" {
		in.Route = DefaultRoute
	}
	if in.OnTimeout == "" {
		in.OnTimeout = OnTimeoutDeny
	}
	if err := in.Validate(); err != nil {
		return nil, false, err
	}
	route, ok := s.cfg.Routes[in.Route]
	if !ok {
		return nil, false, Errorf(CodeInvalid, op, "route %q is not configured", in.Route)
	}
	if in.OnTimeout == OnTimeoutEscalate && route.EscalateTo == "" {
		return nil, false, Errorf(CodeInvalid, op, "on_timeout escalate needs route %q to name escalate_to", in.Route)
	}
	timeout := in.Timeout
	if timeout == 0 {
		timeout = s.cfg.DefaultTimeout
	}
	if timeout > s.cfg.MaxTimeout {
		return nil, false, Errorf(CodeInvalid, op, "timeout %s is longer than the limit %s", timeout, s.cfg.MaxTimeout)
	}
	if in.OnTimeout == OnTimeoutReask && in.MaxReasks == 0 {
		in.MaxReasks = 1
	}

	idem, err := idempotencyOf(in)
	if err != nil {
		return nil, false, err
	}
	shard := mrand.IntN(s.cfg.Shards)
	if idem != nil {
		shard = idem.shard(s.cfg.Shards)
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
		Options:       in.Options,
		Items:         in.Items,
		CreatedAt:     now,
		Deadline:      now.Add(timeout),
		Timeout:       Duration(timeout),
		OnTimeout:     in.OnTimeout,
		MaxReasks:     in.MaxReasks,
		State:         StateOpen,
		Idempotency:   idem,
	}
	if in.Kind == KindApproval {
		sum, canon, err := ArgumentsDigest(in.Arguments)
		if err != nil {
			return nil, false, err
		}
		q.Call = &ToolCall{Tool: in.Tool, Arguments: canon, ArgumentsSHA256: sum}
	}
	asked := Event{
		QuestionID: q.ID, RunID: q.RunID, At: now, Kind: EventAsked,
		Actor: s.digest(Decider{Surface: SurfaceAgent, ID: q.Agent}), Surface: SurfaceAgent,
	}
	if err := s.store.Create(ctx, q, asked, roomDeliveries(q, route, DeliverPost, "post", now)); err != nil {
		if dup, ok := errors.AsType[*DuplicateError](err); ok {
			q, err := repeatOf(in, idem, dup)
			return q, err == nil, err
		}
		if ErrorCode(err) == CodeConflict {
			return nil, false, Errorf(CodeConflict, op, "%s", ErrorMessage(err))
		}
		return nil, false, Internal(op, err)
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

// Outcome is what an attempt to change a question achieved. An attempt
// that lost to an earlier close returns a *ClosedError instead.
type Outcome struct {
	// Question is the question as it stands after the attempt.
	Question *Question
	// Closed is true when this attempt closed the question; false when it
	// recorded form items and the form is still open.
	Closed bool
}

// door is who is knocking, which decides the checks the chokepoint runs.
type door int

const (
	doorHuman  door = iota // a decider on a surface: the route must allow them
	doorAgent              // the asking agent (cancel): it must own the question
	doorSystem             // the bridge itself (timeout, expiry)
)

// attempt is one request to change a question, from any door.
type attempt struct {
	op    string
	id    string
	door  door
	actor Decider
	// owner, for the agent door, is the agent that must have asked the
	// question; "" lets an operator act on any question.
	owner string
	// build turns the stored open question into the transition, or
	// rejects the input with CodeInvalid.
	build func(q *Question, now time.Time) (Transition, error)
}

// resolve is the chokepoint (law 1): every change of a question's state, from
// every door, passes here. The checks run first (who may, what is valid),
// then one atomic store operation decides; whoever loses a race is told who
// won (law 2), and every refused attempt is recorded.
func (s *Service) resolve(ctx context.Context, a attempt) (Outcome, error) {
	if !ValidID(a.id) {
		return Outcome{}, ErrNotFound
	}
	q, err := s.store.Get(ctx, a.id)
	if err != nil {
		if ErrorCode(err) == CodeNotFound {
			return Outcome{}, ErrNotFound
		}
		return Outcome{}, Internal(a.op, err)
	}
	switch a.door {
	case doorAgent:
		// An agent that did not ask the question cannot see it, so it
		// gets the same answer as for an unknown id (law 6).
		if a.owner != "" && q.Agent != a.owner {
			return Outcome{}, ErrNotFound
		}
	case doorHuman:
		if !s.allowed(q, a.actor) {
			s.refuse(ctx, q, a.actor, "not a decider for this question on "+string(a.actor.Surface))
			return Outcome{}, Errorf(CodeForbidden, a.op, "you may not answer this question here")
		}
	}
	if !q.Open() {
		return Outcome{}, s.lost(ctx, a, q)
	}
	now := s.now()
	t, err := a.build(q, now)
	if err != nil {
		return Outcome{}, err
	}
	t.QuestionID, t.Now = q.ID, now
	after, err := s.store.Resolve(ctx, t)
	if err != nil {
		var closed *ClosedError
		if errors.As(err, &closed) {
			return Outcome{}, s.lost(ctx, a, closed.Question)
		}
		if ErrorCode(err) == CodeConflict {
			return Outcome{}, Errorf(CodeConflict, a.op, "%s", ErrorMessage(err))
		}
		return Outcome{}, Internal(a.op, err)
	}
	return Outcome{Question: after, Closed: after.State.Closed()}, nil
}

// lost records a refused attempt on a closed question (unless the bridge
// itself lost a race, which is routine) and tells the truth about it.
func (s *Service) lost(ctx context.Context, a attempt, q *Question) error {
	if a.door != doorSystem {
		reason := "question already " + string(q.State)
		if q.State == StateExpired {
			reason = "question expired: " + ExpiredReason
		}
		s.refuse(ctx, q, a.actor, reason)
	}
	return &ClosedError{Question: q}
}

// refuse appends a refused event. The attempt has already failed; a store
// error here must not turn the caller's honest refusal into an internal
// error, so it is dropped (the store being down shows up everywhere else).
func (s *Service) refuse(ctx context.Context, q *Question, d Decider, reason string) {
	_, _ = s.store.Append(ctx, Event{
		QuestionID: q.ID, RunID: q.RunID, At: s.now(), Kind: EventRefused,
		Actor: s.digest(d), Surface: d.Surface, Reason: reason,
	})
}

// allowed is the one authorisation check for humans on every surface (law
// 6). A route missing from the configuration refuses everyone: fail closed.
// Once a question has been escalated, the escalation route's deciders may
// answer too.
func (s *Service) allowed(q *Question, d Decider) bool {
	route, ok := s.cfg.Routes[q.Route]
	if !ok {
		return false
	}
	if route.Allows(d) {
		return true
	}
	if q.OnTimeout == OnTimeoutEscalate && q.Renotified > 0 && route.EscalateTo != "" {
		if esc, ok := s.cfg.Routes[route.EscalateTo]; ok && esc.Allows(d) {
			return true
		}
	}
	return false
}

// MayAnswer reports whether d may answer q, for doors that want to show or
// hide controls. The chokepoint checks again; this is never enough alone.
func (s *Service) MayAnswer(q *Question, d Decider) bool { return s.allowed(q, d) }

// ItemInput is one form item's answer: an option or free text.
type ItemInput struct {
	ItemID   string `json:"item_id"`
	OptionID string `json:"option_id,omitempty"`
	Text     string `json:"text,omitempty"`
}

// AnswerInput is a human's answer from any surface.
type AnswerInput struct {
	QuestionID string
	Decider    Decider
	// Text is the clarification's answer, an optional note on a decision,
	// or an approval's optional reason.
	Text string
	// OptionID is the chosen decision option, or ApproveOption /
	// DenyOption for an approval.
	OptionID string
	// Items answer form items, one or several at once.
	Items []ItemInput
}

// The two choices of an approval, as option ids so that buttons and the
// API address them like any other option.
const (
	ApproveOption = "approve"
	DenyOption    = "deny"
)

// Answer records a human's answer. For a form it records the given items
// and closes the question once every item has an answer.
func (s *Service) Answer(ctx context.Context, in AnswerInput) (Outcome, error) {
	return s.resolve(ctx, attempt{
		op: "answer", id: in.QuestionID, door: doorHuman, actor: in.Decider,
		build: func(q *Question, now time.Time) (Transition, error) {
			return s.answerTransition(q, in, now)
		},
	})
}

func (s *Service) answerTransition(q *Question, in AnswerInput, now time.Time) (Transition, error) {
	const op = "answer"
	d := in.Decider
	res := &Resolution{State: StateAnswered, Decider: publicDecider(d), At: now}
	if q.Kind != KindForm && len(in.Items) > 0 {
		return Transition{}, Errorf(CodeInvalid, op, "only a form takes item answers")
	}
	switch q.Kind {
	case KindClarification:
		if blank(in.Text) {
			return Transition{}, Errorf(CodeInvalid, op, "the answer must not be blank")
		}
		if in.OptionID != "" {
			return Transition{}, Errorf(CodeInvalid, op, "a clarification takes a text answer, not an option")
		}
		if err := checkLen(op, "answer", in.Text, MaxAnswerLen); err != nil {
			return Transition{}, err
		}
		res.Answer = in.Text
	case KindDecision:
		if in.OptionID == "" {
			return Transition{}, Errorf(CodeInvalid, op, "a decision is answered by choosing an option")
		}
		opt, ok := q.Option(in.OptionID)
		if !ok {
			return Transition{}, Errorf(CodeInvalid, op, "option %q is not one of this question's options", in.OptionID)
		}
		if err := checkLen(op, "note", in.Text, MaxReasonLen); err != nil {
			return Transition{}, err
		}
		res.OptionID, res.Answer, res.Reason = opt.ID, opt.Writeup, strings.TrimSpace(in.Text)
	case KindApproval:
		var approved bool
		switch in.OptionID {
		case ApproveOption:
			approved = true
		case DenyOption:
		default:
			return Transition{}, Errorf(CodeInvalid, op, "an approval is answered with %q or %q", ApproveOption, DenyOption)
		}
		if err := checkLen(op, "reason", in.Text, MaxReasonLen); err != nil {
			return Transition{}, err
		}
		res.Approved, res.Reason = &approved, strings.TrimSpace(in.Text)
		res.ArgumentsSHA256 = q.Call.ArgumentsSHA256
	case KindForm:
		items, err := formItems(q, in, d, now)
		if err != nil {
			return Transition{}, err
		}
		payload, _ := json.Marshal(map[string]any{"items": itemIDs(items)})
		return Transition{
			Items:      items,
			Resolution: res,
			Event:      s.closeEvent(q, res, ""),
			ItemEvent: Event{QuestionID: q.ID, RunID: q.RunID, At: now, Kind: EventItemAnswered,
				Actor: s.digest(d), Surface: d.Surface, Payload: payload},
		}, nil
	}
	return Transition{Resolution: res, Event: s.closeEvent(q, res, res.Reason)}, nil
}

// formItems checks a form answer: each item exists, is not answered yet,
// and gets exactly one existing option or non-blank free text.
func formItems(q *Question, in AnswerInput, d Decider, now time.Time) ([]ItemAnswer, error) {
	const op = "answer"
	if in.Text != "" || in.OptionID != "" {
		return nil, Errorf(CodeInvalid, op, "a form is answered item by item")
	}
	if len(in.Items) == 0 {
		return nil, Errorf(CodeInvalid, op, "the answer must name at least one form item")
	}
	seen := map[string]bool{}
	out := make([]ItemAnswer, 0, len(in.Items))
	for _, ii := range in.Items {
		item, ok := q.Item(ii.ItemID)
		if !ok {
			return nil, Errorf(CodeInvalid, op, "item %q is not one of this form's items", ii.ItemID)
		}
		if seen[ii.ItemID] {
			return nil, Errorf(CodeInvalid, op, "item %q is answered twice", ii.ItemID)
		}
		seen[ii.ItemID] = true
		if prev, done := q.Answered(ii.ItemID); done {
			return nil, Errorf(CodeConflict, op, "item %q was already answered at %s", ii.ItemID, prev.At.Format(time.RFC3339))
		}
		switch {
		case ii.OptionID != "" && ii.Text != "":
			return nil, Errorf(CodeInvalid, op, "item %q takes an option or free text, not both", ii.ItemID)
		case ii.OptionID != "":
			found := false
			for _, o := range item.Options {
				found = found || o.ID == ii.OptionID
			}
			if !found {
				return nil, Errorf(CodeInvalid, op, "option %q is not one of item %q's options", ii.OptionID, ii.ItemID)
			}
		case blank(ii.Text):
			return nil, Errorf(CodeInvalid, op, "item %q: the answer must not be blank", ii.ItemID)
		default:
			if err := checkLen(op, "items.text", ii.Text, MaxAnswerLen); err != nil {
				return nil, err
			}
		}
		out = append(out, ItemAnswer{ItemID: ii.ItemID, OptionID: ii.OptionID, Text: ii.Text, Decider: publicDecider(d), At: now})
	}
	return out, nil
}

func itemIDs(items []ItemAnswer) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ItemID
	}
	return ids
}

// publicDecider is what a resolution keeps of a decider: roles are checked
// at the moment of the act and not stored.
func publicDecider(d Decider) Decider {
	return Decider{Surface: d.Surface, ID: d.ID, Name: d.Name}
}

func (s *Service) closeEvent(q *Question, res *Resolution, reason string) Event {
	return Event{
		QuestionID: q.ID, RunID: q.RunID, At: res.At, Kind: closeEvent(res.State),
		Actor: s.digest(res.Decider), Surface: res.Decider.Surface, Reason: reason,
	}
}

// systemClose builds the transition for a close that carries no answer.
func (s *Service) systemClose(state State, d Decider, reason string) func(*Question, time.Time) (Transition, error) {
	return func(q *Question, now time.Time) (Transition, error) {
		res := &Resolution{State: state, Decider: publicDecider(d), At: now, Reason: reason}
		return Transition{Resolution: res, Event: s.closeEvent(q, res, reason)}, nil
	}
}

// Decline closes the question without an answer; the agent resumes with a
// fixed server-owned text telling it to proceed on its own judgement.
func (s *Service) Decline(ctx context.Context, id string, d Decider) (Outcome, error) {
	return s.resolve(ctx, attempt{op: "decline", id: id, door: doorHuman, actor: d,
		build: s.systemClose(StateDeclined, d, DeclineReason)})
}

// Cancel withdraws a question. by is who withdraws it (the asking agent,
// or an operator); owner, when set, is the agent that must have asked it,
// and any other agent's question reads as unknown (law 6).
func (s *Service) Cancel(ctx context.Context, id string, by Decider, owner, reason string) (Outcome, error) {
	if err := checkLen("cancel", "reason", reason, MaxReasonLen); err != nil {
		return Outcome{}, err
	}
	if strings.TrimSpace(reason) == "" {
		reason = "withdrawn by " + string(by.Surface) + " " + by.ID
	}
	return s.resolve(ctx, attempt{op: "cancel", id: id, door: doorAgent, owner: owner, actor: by,
		build: s.systemClose(StateCancelled, by, reason)})
}

// EndRun marks an agent's run ended and expires its open questions, each
// through the chokepoint with its own expired event. A later answer to any
// of them is refused, and so is a later ask into the run. Runs are each
// agent's own: another agent's run of the same name is untouched.
func (s *Service) EndRun(ctx context.Context, runID, agent string) ([]Outcome, error) {
	const op = "end run"
	if err := checkID(op, "run_id", runID, true); err != nil {
		return nil, err
	}
	if err := checkID(op, "agent", agent, true); err != nil {
		return nil, err
	}
	ids, err := s.store.EndRun(ctx, RunKey(agent, runID), s.now())
	if err != nil {
		return nil, Internal(op, err)
	}
	var out []Outcome
	for _, id := range ids {
		o, err := s.resolve(ctx, attempt{op: op, id: id, door: doorAgent, owner: agent, actor: System,
			build: s.systemClose(StateExpired, System, ExpiredReason)})
		switch {
		case err == nil:
			out = append(out, o)
		case errors.Is(err, ErrClosed), ErrorCode(err) == CodeNotFound:
			// closed or purged meanwhile
		default:
			return out, err
		}
	}
	return out, nil
}

// Get returns a question. A malformed id reads as an unknown one.
func (s *Service) Get(ctx context.Context, id string) (*Question, error) {
	if !ValidID(id) {
		return nil, ErrNotFound
	}
	q, err := s.store.Get(ctx, id)
	if err != nil {
		if ErrorCode(err) == CodeNotFound {
			return nil, ErrNotFound
		}
		return nil, Internal("get", err)
	}
	return q, nil
}

// Wait blocks until the question is closed or ctx ends, and returns the
// question as it then stands (open if ctx ended first). It is woken by the
// store, never by polling.
func (s *Service) Wait(ctx context.Context, id string) (*Question, error) {
	if !ValidID(id) {
		return nil, ErrNotFound
	}
	ch, stop := s.store.Watch(id)
	defer stop()
	for {
		// A caller whose deadline has already passed still gets the
		// question as it stands, so read with a context that has not ended.
		readCtx := ctx
		if ctx.Err() != nil {
			readCtx = context.WithoutCancel(ctx)
		}
		q, err := s.Get(readCtx, id)
		if err != nil || !q.Open() || ctx.Err() != nil {
			return q, err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			// The caller's deadline is not an error: report the question
			// as it stands, read with a fresh context.
			return s.Get(context.WithoutCancel(ctx), id)
		}
	}
}

// ListOpen lists open questions, hard-to-reverse first, then oldest first.
func (s *Service) ListOpen(ctx context.Context, cursor string, limit int) ([]*Question, string, error) {
	switch {
	case limit <= 0:
		limit = 50
	case limit > 500:
		limit = 500 // a page, not a dump: callers follow the cursor
	}
	qs, next, err := s.store.ListOpen(ctx, cursor, limit)
	if err != nil {
		if ErrorCode(err) == CodeInvalid {
			return nil, "", err
		}
		return nil, "", Internal("list", err)
	}
	return qs, next, nil
}

// Events returns events after seq since.
func (s *Service) Events(ctx context.Context, since int64, limit int) ([]Event, error) {
	switch {
	case limit <= 0:
		limit = 100
	case limit > 1000:
		limit = 1000
	}
	ev, err := s.store.Events(ctx, since, limit)
	return ev, Internal("events", err)
}

// RecordMessage stores a card an adapter posted, with its notified event,
// and returns the question as it stands: if it closed while the card was
// on its way, the adapter edits the card at once.
func (s *Service) RecordMessage(ctx context.Context, id string, ref MessageRef) (*Question, error) {
	return s.recordMessage(ctx, id, ref, false)
}

// recordMessage records a card; repeat marks one posted again after an
// earlier attempt may have posted a card that was never recorded (a crash
// between the two), so the notified event says the room may hold an
// earlier copy, which still answers but is not edited (law 4).
func (s *Service) recordMessage(ctx context.Context, id string, ref MessageRef, repeat bool) (*Question, error) {
	if ref.Delivery == "" || ref.ID == "" || !ref.Surface.IsChat() {
		return nil, Errorf(CodeInvalid, "record message", "a card needs its surface, message id and delivery key")
	}
	ref.At = s.now()
	payload, _ := json.Marshal(map[string]any{"surface": ref.Surface, "room": ref.Room, "message": ref.ID, "delivery": ref.Delivery,
		"repeat": repeat})
	ev := Event{QuestionID: id, At: ref.At, Kind: EventNotified, Surface: ref.Surface, Payload: payload}
	if repeat {
		ev.Reason = "posted again: an earlier attempt may have left an unrecorded copy in the room"
	}
	q, err := s.store.RecordMessage(ctx, id, ref, ev)
	return q, Internal("record message", err)
}

// Digest is "what did you ask me while I was away": questions asked and
// closed in [From, To), and those still open.
type Digest struct {
	From   time.Time   `json:"from"`
	To     time.Time   `json:"to"`
	Asked  []*Question `json:"asked"`
	Closed []*Question `json:"closed"`
	Open   []*Question `json:"open"`
}

// digestLimit bounds each list of a digest; a digest is a summary.
const digestLimit = 500

// Digest summarises [from, to). With a decider, only questions on routes
// that decider may answer are included; with route set, only that route's.
func (s *Service) Digest(ctx context.Context, from, to time.Time, decider *Decider, route string) (Digest, error) {
	const op = "digest"
	if to.IsZero() {
		to = s.now()
	}
	if !from.Before(to) {
		return Digest{}, Errorf(CodeInvalid, op, "since must be before until")
	}
	keep := func(q *Question) bool {
		if route != "" && q.Route != route {
			return false
		}
		return decider == nil || s.allowed(q, *decider)
	}
	d := Digest{From: from.UTC(), To: to.UTC()}
	for _, part := range []struct {
		idx TimeIndex
		dst *[]*Question
	}{{ByCreated, &d.Asked}, {ByClosed, &d.Closed}} {
		qs, err := s.store.Between(ctx, part.idx, from, to, digestLimit)
		if err != nil {
			return Digest{}, Internal(op, err)
		}
		*part.dst = filter(qs, keep)
	}
	cursor := ""
	for len(d.Open) < digestLimit {
		qs, next, err := s.store.ListOpen(ctx, cursor, 100)
		if err != nil {
			return Digest{}, Internal(op, err)
		}
		d.Open = append(d.Open, filter(qs, keep)...)
		if next == "" {
			break
		}
		cursor = next
	}
	return d, nil
}

func filter(qs []*Question, keep func(*Question) bool) []*Question {
	out := []*Question{}
	for _, q := range qs {
		if keep(q) {
			out = append(out, q)
		}
	}
	return out
}

// sortedRouteNames keeps boot-time work in a stable order.
func (s *Service) sortedRouteNames() []string {
	names := make([]string, 0, len(s.cfg.Routes))
	for n := range s.cfg.Routes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

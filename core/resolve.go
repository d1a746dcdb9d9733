package core

import (
	"context"
	"errors"
	"strings"
	"time"
)

// DeclineReason is what a decline records as its reason. The agent's
// resume text for a decline comes from fence, fenced, not from here.
const DeclineReason = "the decider declined to choose"

// TimeoutReason is the honest account of a timeout: nobody answered, which
// is not the same as a human saying no.
const TimeoutReason = "nobody answered before the deadline"

// ExpiredReason is recorded when a question's run ends while it is open.
const ExpiredReason = "the run this question belonged to has ended"

// Outcome is what an attempt to change a question achieved. An attempt
// that lost to an earlier close returns a *ClosedError instead.
type Outcome struct {
	// Question is the question as it stands after the attempt.
	Question *Question
	// Closed is true when this attempt closed the question; false when it
	// recorded form items and the form is still open.
	Closed bool
	// Standing is the standing approval the answer granted, if it asked
	// for one; Standings those a batch's decisions granted.
	Standing  *Standing
	Standings []Standing
	// Held is the update of the card the caller's response shows
	// (AnswerInput.Shown), held back for the caller to drop once that
	// response is delivered (Service.Delivered); nil if nothing was held.
	Held *Held
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
	// shown is the card (message id on the actor's surface) the caller's
	// response updates in place; "" for none.
	shown string
	// again marks a build that takes whatever parts are still undecided
	// when it reads ("approve all"): if the store refuses it because one
	// of them was decided first, a fresh read may still succeed.
	again bool
}

// againTries bounds how often an attempt marked again is tried after
// losing a part to a decision that landed first: each try takes the parts
// still undecided, so every part ends with exactly one outcome.
const againTries = 6

// resolve is the chokepoint (law 1): every change of a question's state, from
// every door, passes here. The checks run first (who may, what is valid),
// then one atomic store operation decides; whoever loses a race is told who
// won (law 2). However many tries an attempt takes, it is one attempt: it is
// observed once, and a refusal is recorded once, here and not in a try.
func (s *Service) resolve(ctx context.Context, a attempt) (out Outcome, err error) {
	defer func(start time.Time) { s.observeResolve(start, a, out, err) }(time.Now())
	for try := 1; ; try++ {
		out, err = s.try(ctx, a, try > 1)
		var taken *partTaken
		if !errors.As(err, &taken) {
			break
		}
		if err = taken.err; !a.again || try == againTries {
			break
		}
	}
	var closed *ClosedError
	if errors.As(err, &closed) {
		return Outcome{}, s.lost(ctx, a, closed.Question)
	}
	return out, err
}

// partTaken is a try's error when the store refused its transition only
// because a part it decides (a form item, a batch call) was decided first:
// for an attempt marked again, a fresh read may still succeed. resolve
// unwraps it; no caller sees it.
type partTaken struct{ err error }

func (p *partTaken) Error() string { return p.err.Error() }
func (p *partTaken) Unwrap() error { return p.err }

// try is one pass of an attempt: one read, the checks, one store
// operation. Only a lost part is tried again, so a refusal a try meets is
// final: a closed question is recorded by resolve, once per attempt, and
// a forbidden one here. A try after a lost part reads the question as
// stored, not a local copy that may not show the decision it lost to yet.
func (s *Service) try(ctx context.Context, a attempt, fresh bool) (Outcome, error) {
	read := s.store.ReadToChange
	if fresh {
		read = s.store.Get
	}
	if !ValidID(a.id) {
		return Outcome{}, ErrNotFound
	}
	q, err := read(ctx, a.id)
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
		who := s.identify(a.actor)
		a.actor = who.Decider
		if !s.allowed(q, who) {
			// A copy ReadToChange kept may not yet show an escalation made
			// on another replica (its renotice count trails), so a refusal
			// is decided on the question as stored.
			if q, err = s.store.Get(ctx, a.id); err != nil {
				if ErrorCode(err) == CodeNotFound {
					return Outcome{}, ErrNotFound
				}
				return Outcome{}, Internal(a.op, err)
			}
		}
		if !s.allowed(q, who) {
			return Outcome{}, s.forbid(ctx, q, who, a.op)
		}
	}
	if !q.Open() {
		return Outcome{}, &ClosedError{Question: q}
	}
	now := s.now()
	t, err := a.build(q, now)
	if err != nil {
		return Outcome{}, err
	}
	t.QuestionID, t.Now, t.Read = q.ID, now, q
	if a.shown != "" {
		t.Hold = newHeld(q.ID, a.actor.Surface, a.shown)
	}
	after, err := s.store.Resolve(ctx, t)
	if err != nil {
		if errors.Is(err, ErrClosed) {
			return Outcome{}, err
		}
		var applied *AppliedError
		if errors.As(err, &applied) {
			// Recorded, and closed since by someone else: this attempt
			// did not close it, whatever the question says now.
			return Outcome{Question: applied.Question}, nil
		}
		if ErrorCode(err) == CodeConflict {
			err = Errorf(CodeConflict, a.op, "%s", ErrorMessage(err))
			if alreadyCounted(err) {
				return Outcome{}, err
			}
			return Outcome{}, &partTaken{err}
		}
		return Outcome{}, Internal(a.op, err)
	}
	out := Outcome{Question: after, Closed: after.State.Closed()}
	if t.Hold != nil && t.Hold.showsCard(after) {
		out.Held = t.Hold
	}
	return out, nil
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
		Actor: s.pseudonym(d), Surface: d.Surface, Reason: reason,
	})
}

// forbid records the refusal of someone q's route does not allow, and is
// what they are told, the same from every door.
func (s *Service) forbid(ctx context.Context, q *Question, who identified, op string) error {
	s.refuse(ctx, q, who.Decider, "not a decider for this question on "+string(who.Surface))
	return Errorf(CodeForbidden, op, "you may not answer this question here")
}

// allowed is the one permission check for every act of a person on a
// question, on every surface (law 6): an answer, a vote, an edit, a
// decline, and so the standing approval an approve grants; digests and
// the doors' MayAnswer ask it too. It takes only an identified decider:
// a route may name its people (person:, group:) rather than accounts,
// and only identify knows whose an account is. A route missing from the
// configuration refuses everyone: fail closed. Once a question has been
// escalated, the escalation route's deciders may answer too.
func (s *Service) allowed(q *Question, d identified) bool {
	route, ok := s.cfg.Routes[q.Route]
	if !ok {
		return false
	}
	if route.Allows(d.Decider) {
		return true
	}
	if q.OnTimeout == OnTimeoutEscalate && q.Renotified > 0 && route.EscalateTo != "" {
		if esc, ok := s.cfg.Routes[route.EscalateTo]; ok && esc.Allows(d.Decider) {
			return true
		}
	}
	return false
}

// MayAnswer reports whether d may answer q, for doors that want to show or
// hide controls. The chokepoint checks again; this is never enough alone.
func (s *Service) MayAnswer(q *Question, d Decider) bool { return s.allowed(q, s.identify(d)) }

func (s *Service) closeEvent(q *Question, res *Resolution, reason string) Event {
	return Event{
		QuestionID: q.ID, RunID: q.RunID, At: res.At, Kind: closeEvent(res.State),
		Actor: s.pseudonym(res.Decider), Surface: res.Decider.Surface, Reason: reason,
	}
}

// systemClose builds the transition for a close that carries no answer,
// recording who or what closed it.
func (s *Service) systemClose(state State, by Closer, d Decider, reason string) func(*Question, time.Time) (Transition, error) {
	return func(q *Question, now time.Time) (Transition, error) {
		res := &Resolution{State: state, ClosedBy: by, Decider: publicDecider(d), At: now, Reason: reason}
		return Transition{Resolution: res, Event: s.closeEvent(q, res, reason)}, nil
	}
}

// Decline closes the question without an answer; the agent resumes with a
// fixed server-owned text telling it to proceed on its own judgement.
func (s *Service) Decline(ctx context.Context, id string, d Decider) (Outcome, error) {
	return s.DeclineShown(ctx, id, d, "")
}

// DeclineShown is Decline from a caller whose own response shows the
// card it was declined on (shown, its message id on d's surface; see
// AnswerInput.Shown).
func (s *Service) DeclineShown(ctx context.Context, id string, d Decider, shown string) (Outcome, error) {
	d = s.identify(d).Decider
	return s.resolve(ctx, attempt{op: "decline", id: id, door: doorHuman, actor: d, shown: shown,
		build: s.systemClose(StateDeclined, CloserDecline, d, DeclineReason)})
}

// CancelInput withdraws a question. It is a struct, not four arguments,
// because three of them are strings a caller could swap unnoticed.
type CancelInput struct {
	QuestionID string
	// By is who withdraws it: the asking agent, or an operator.
	By Decider
	// Owner, when set, is the agent that must have asked the question;
	// any other agent's question reads as unknown (law 6). "" lets an
	// operator withdraw any question.
	Owner string
	// Reason is recorded with the close; blank records who withdrew it.
	Reason string
}

// Cancel withdraws a question.
func (s *Service) Cancel(ctx context.Context, in CancelInput) (Outcome, error) {
	reason := in.Reason
	if err := checkLen("cancel", "reason", reason, MaxReasonLen); err != nil {
		return Outcome{}, err
	}
	if strings.TrimSpace(reason) == "" {
		reason = defaultCancelReason(in.By)
	}
	return s.resolve(ctx, attempt{op: "cancel", id: in.QuestionID, door: doorAgent, owner: in.Owner, actor: in.By,
		build: s.systemClose(StateCancelled, cancelCloser(in.By), in.By, reason)})
}

// Run names one agent's run. Runs are each agent's own, so a run id never
// travels without its agent, and the two cannot be swapped.
type Run struct {
	Agent string
	ID    string
}

// Key is how stores name the run: its agent and id, so one agent can
// never end, or block asks into, another agent's run of the same name.
func (r Run) Key() string { return r.Agent + "\x1f" + r.ID }

// EndRun marks an agent's run ended and expires its open questions, each
// through the chokepoint with its own expired event. A later answer to any
// of them is refused, and so is a later ask into the run. Runs are each
// agent's own: another agent's run of the same name is untouched.
func (s *Service) EndRun(ctx context.Context, run Run) ([]Outcome, error) {
	const op = "end run"
	if err := checkID(op, "run_id", run.ID, true); err != nil {
		return nil, err
	}
	if err := checkID(op, "agent", run.Agent, true); err != nil {
		return nil, err
	}
	ids, err := s.store.EndRun(ctx, run.Key(), s.now())
	if err != nil {
		return nil, Internal(op, err)
	}
	if err := s.endRunStandings(ctx, run); err != nil {
		return nil, err
	}
	var out []Outcome
	for _, id := range ids {
		o, err := s.resolve(ctx, attempt{op: op, id: id, door: doorAgent, owner: run.Agent, actor: System,
			build: s.systemClose(StateExpired, CloserExpiry, System, ExpiredReason)})
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

// defaultCancelReason is what a cancel that gives no reason records: who
// withdrew the question. Cards leave it out, since they say who already.
func defaultCancelReason(by Decider) string {
	return "withdrawn by " + string(by.Surface) + " " + by.ID
}

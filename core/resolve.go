package core

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
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
	// (AnswerInput.Shown), delayed for the caller to cancel once that
	// response is delivered (Service.Delivered); nil if nothing was held.
	Held *Pending
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
	id    QuestionID
	door  door
	actor Decider
	// owner, for the agent door, is the agent that must have asked the
	// question; "" lets an operator act on any question.
	owner AgentID
	// build turns the stored open question into the transition, or
	// rejects the input with CodeInvalid. It may run more than once, each
	// time on a newer question (see resolve), so it decides from q alone:
	// "approve all" takes the calls still undecided in the q it is given.
	build func(q *Question, now time.Time) (Transition, error)
	// shown is the card (message id on the actor's surface) the caller's
	// response updates in place; "" for none.
	shown string
	// read, when set, is the question as the caller read it, which the
	// first try starts from (see AnswerInput.read); nil: read it.
	read *Question
	// admitted, when set, is told the actor as admit identified them for
	// its check, so that a build records the person the check let in,
	// not one a reload since the door's own reading has renamed.
	admitted *Decider
}

// staleTries bounds how often an attempt is computed again after another
// change of its question landed first (a vote, a form item, a card, a
// reminder). Each try reads the question as it now stands, so a hot
// question's voters take turns; the bound only stops a livelock.
const staleTries = 64

// staleWait is the most a retry waits before it reads again, after its
// jitter has grown; the first retries wait far less (backoff).
const staleWait = 8 * time.Millisecond

// staleBackoff waits before the try-th retry of a stale change: a random time
// up to a bound that doubles with each try, to staleWait, so that the
// attempts that collided spread out instead of colliding again.
func staleBackoff(ctx context.Context, try int) {
	limit := staleWait
	if try < 14 {
		limit = min(staleWait, time.Duration(50<<try)*time.Microsecond)
	}
	t := time.NewTimer(rand.N(limit) + time.Microsecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// resolve is the chokepoint (law 1): every change of a question's state, from
// every door, passes here. The checks run first (who may, what is valid),
// then Next computes the change and one atomic store operation writes it
// if the question is still as read (law 10); whoever loses a race is told
// who won (law 2). An attempt whose change went stale (another change
// landed first) is computed again on the question as it now stands, a
// bounded number of times: however many tries it takes, it is one
// attempt, observed once, and a refusal is recorded once, here and not in
// a try.
func (s *Service) resolve(ctx context.Context, a attempt) (out Outcome, err error) {
	defer func(start time.Time) {
		s.observeResolve(start, a, out, err)
		s.traceResolve(ctx, start, a, out, err)
	}(time.Now())
	q := a.read // the question as the last try found it stored; nil: read it
	for try := 1; ; try++ {
		out, err = s.try(ctx, a, q, try > 1)
		var stale *StaleError
		if !errors.As(err, &stale) {
			break
		}
		if ctx.Err() != nil {
			err = Internal(a.op, ctx.Err())
			break
		}
		if try == staleTries {
			err = conflictOf(errTooFast, a.op, "question %s is changing too fast to take this; try again", a.id)
			break
		}
		q = stale.Question
		if q == nil || q.Open() {
			staleBackoff(ctx, try) // contention: let the others through
		}
	}
	var closed *ClosedError
	if errors.As(err, &closed) {
		return Outcome{}, s.lost(ctx, a, closed.Question)
	}
	return out, err
}

// try is one pass of an attempt: one read (unless q, the question as the
// store last had it, is given), the checks of who may act (and, for a
// person, that the question's run is not being ended), Next and one
// Commit.
func (s *Service) try(ctx context.Context, a attempt, q *Question, again bool) (Outcome, error) {
	if !ValidID(a.id) {
		return Outcome{}, ErrNotFound
	}
	if q == nil {
		var err error
		if q, err = s.readFor(ctx, a, again); err != nil {
			return Outcome{}, err
		}
	}
	q, a, err := s.admit(ctx, a, q)
	if err != nil {
		return Outcome{}, err
	}
	if !q.Open() {
		return Outcome{}, s.closedFor(q, a.actor)
	}
	if a.door == doorHuman {
		if err := s.refuseIfEnding(ctx, q); err != nil {
			return Outcome{}, err
		}
	}
	c, err := s.changeOf(a, q)
	if err != nil {
		return Outcome{}, err
	}
	return s.commit(ctx, a, c)
}

// readFor reads the question an attempt acts on. A try after a stale one
// reads the question as stored, not a local copy that may not show the
// change it lost to yet.
func (s *Service) readFor(ctx context.Context, a attempt, again bool) (*Question, error) {
	read := s.store.ReadToChange
	if again {
		read = s.store.Get
	}
	q, err := read(ctx, a.id)
	return q, a.readErr(err)
}

// readErr is a read's error as the attempt reports it: an unknown id as
// ErrNotFound, whatever the store's words, and the rest as internal.
func (a attempt) readErr(err error) error {
	switch {
	case err == nil:
		return nil
	case ErrorCode(err) == CodeNotFound:
		return ErrNotFound
	default:
		return Internal(a.op, err)
	}
}

// admit checks that the attempt's actor may act on q, by its door (law
// 6), and returns the question the checks were decided on and the
// attempt with its actor as configured (s.identify: a person's accounts
// are named once, across platforms).
func (s *Service) admit(ctx context.Context, a attempt, q *Question) (*Question, attempt, error) {
	switch a.door {
	case doorAgent:
		// An agent that did not ask the question cannot see it, so it
		// gets the same answer as for an unknown id (law 6).
		if a.owner != "" && q.Agent != a.owner {
			return nil, a, ErrNotFound
		}
	case doorHuman:
		// Who the actor is and whether the routes let them in are read
		// from one configuration: a reload between the two could let in
		// someone neither file allows (an account one file gives to
		// Alice, checked against the other's route that names her). So
		// the check is made again until no reload landed during it.
		for {
			b := s.conf()
			who := s.identify(a.actor)
			ok := s.allowed(q, who)
			if !ok {
				// A copy ReadToChange kept may not yet show an escalation
				// made on another replica (its renotice count trails), so
				// a refusal is decided on the question as stored.
				stored, err := s.store.Get(ctx, a.id)
				if err != nil {
					return nil, a, a.readErr(err)
				}
				q = stored
				ok = s.allowed(q, who)
			}
			if s.conf() != b {
				continue
			}
			if !ok {
				return nil, a, s.forbid(ctx, q, who, a.op)
			}
			a.actor = who.Decider
			if a.admitted != nil {
				*a.admitted = who.Decider
			}
			return q, a, nil
		}
	}
	return q, a, nil
}

// changeOf builds the attempt's transition of the open question q and
// computes its change (Next).
func (s *Service) changeOf(a attempt, q *Question) (Change, error) {
	now := s.now()
	// The build reads the votes as counted now (a timeout's reason, a
	// vote's count), and a close keeps that count (tally.go).
	q = s.counted(q)
	t, err := a.build(q, now)
	if err != nil {
		return Change{}, err
	}
	if t.Resolution != nil && q.Counted != nil {
		t.Resolution.Counted = q.Counted
	}
	t.QuestionID, t.Now = q.ID, now
	if a.shown != "" {
		t.Shown = &ShownCard{Surface: a.actor.Surface, MessageID: a.shown}
	}
	c, err := Next(q, t)
	if err != nil && ErrorCode(err) == CodeInternal {
		return Change{}, Internal(a.op, err)
	}
	return c, err
}

// commit stores the attempt's change (law 1) and says what became of it.
// A stale change and a closed question are passed on as they are, for
// resolve to try again or to tell who won.
func (s *Service) commit(ctx context.Context, a attempt, c Change) (Outcome, error) {
	after, err := s.store.Commit(ctx, c)
	if err == nil {
		return Outcome{Question: s.counted(after), Closed: c.Closes(), Held: heldOf(c)}, nil
	}
	var stale *StaleError
	if errors.As(err, &stale) || errors.Is(err, ErrClosed) {
		return Outcome{}, err
	}
	var applied *AppliedError
	if errors.As(err, &applied) {
		// Recorded, and closed since by someone else: this attempt did
		// not close it, whatever the question says now.
		return Outcome{Question: s.counted(applied.Question)}, nil
	}
	if ctx.Err() != nil && ErrorCode(err) == CodeInternal {
		// The change was sent and the wait for its reply was cut: it may
		// have landed (ErrOutcomeUnknown). Still internal to every door
		// that only asks for the code.
		return Outcome{}, fmt.Errorf("%w (%w)", Internal(a.op, err), ErrOutcomeUnknown)
	}
	return Outcome{}, a.readErr(err)
}

// Apply applies t to question t.QuestionID as st stores it and returns
// the question after it, the way the chokepoint does but without its
// checks of who may act: it reads the question (t.Read, if set, on the
// first try), computes the change with Next and commits it, and when
// another change landed first computes it again on the question as
// stored, as often as resolve would. It is for driving a store directly
// (stores' own tests and benchmarks); every door goes through a Service.
func Apply(ctx context.Context, st interface {
	Get(ctx context.Context, id QuestionID) (*Question, error)
	Commit(ctx context.Context, c Change) (*Question, error)
}, t Transition) (*Question, error) {
	q := t.Read
	for try := 1; ; try++ {
		if q == nil {
			var err error
			if q, err = st.Get(ctx, t.QuestionID); err != nil {
				return nil, err
			}
		}
		c, err := Next(q, t)
		if err != nil {
			return nil, err
		}
		after, err := st.Commit(ctx, c)
		var stale *StaleError
		if !errors.As(err, &stale) || try == staleTries {
			return after, err
		}
		if q = stale.Question; q == nil || q.Open() {
			staleBackoff(ctx, try)
		}
	}
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
	return s.closedFor(q, a.actor)
}

// closedFor is the ClosedError that tells actor q is closed, Own when
// actor closed it as a whole: the closer's account or person is theirs,
// matched as a second vote of theirs is (sameVoter).
func (s *Service) closedFor(q *Question, actor Decider) *ClosedError {
	e := &ClosedError{Question: q}
	switch CloserOf(q) {
	case CloserPerson, CloserDecline, CloserOperatorCancel:
		by := q.Resolution.Decider
		e.Own = actor.ID != "" && sameVoter(Vote{Key: VoteKey(by), Decider: by}, VoteKey(actor), s.voterKeys(actor))
	}
	return e
}

// refuse appends a refused event. The attempt has already failed; a store
// error here must not turn the caller's honest refusal into an internal
// error (appendAside).
func (s *Service) refuse(ctx context.Context, q *Question, d Decider, reason string) {
	s.appendAside(ctx, Event{
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
// decline; digests and the doors' MayAnswer ask it too. A standing
// approval an approve grants asks more: the route's own deciders alone
// (answerBuild). It takes only an identified decider: a route may name
// its people (person:, group:) rather than accounts, and only identify
// knows whose an account is. A route missing from the
// configuration refuses everyone: fail closed. Once a question has been
// escalated, the escalation route's deciders may answer too.
//
// An agent's MCP host answers neither its own permission prompt nor a
// question that needs several people: a quorum counts different people,
// and the host is no one askbridge can tell apart (the agent's own token
// acts there, and the person at its keyboard may vote again from chat).
func (s *Service) allowed(q *Question, d identified) bool {
	if d.Surface == SurfaceMCP && (q.HostPrompt || q.Quorum > 1) {
		return false
	}
	for _, r := range s.decidingRoutes(q) {
		if r.Allows(d.Decider) {
			return true
		}
	}
	return false
}

// OnlyAnyone reports whether d may decide q only through a "*" entry of
// their surface: allowed, but by no id, role or person the routes name.
// A door whose "*" means less than anyone the surface authenticated
// (Slack's: the members of the bot's own workspace, not those of an
// organisation sharing a channel) narrows it with this, in core's one
// reading of the routes.
func (s *Service) OnlyAnyone(q *Question, d Decider) bool {
	who := s.identify(d)
	if !s.allowed(q, who) {
		return false
	}
	for _, r := range s.decidingRoutes(q) {
		named := slices.DeleteFunc(slices.Clone(r.Deciders[who.Surface]), func(e string) bool { return ParseDecider(e).Anyone })
		r.Deciders = map[Surface][]string{who.Surface: named} // a copy: the route in force is left as it is
		if r.Allows(who.Decider) {
			return false
		}
	}
	return true
}

// decidingRoutes are the routes whose deciders may act on q now: the
// route it was asked under, as configured now, and, once it escalated,
// the route it escalated to. None when its route is gone (fail closed).
func (s *Service) decidingRoutes(q *Question) []Route {
	route, ok := s.RouteOf(q)
	if !ok {
		return nil
	}
	routes := []Route{route}
	if q.OnTimeout == OnTimeoutEscalate && q.Renotified > 0 {
		if esc, ok := s.escalation(route); ok {
			routes = append(routes, esc)
		}
	}
	return routes
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

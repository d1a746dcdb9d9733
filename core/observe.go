package core

import (
	"context"
	"errors"
	"time"
)

// Observer hears what core does, for metrics: it is told of every ask, every
// pass through the chokepoint, every delivery attempt and every woken
// waiter. Everything it receives is low-cardinality by construction: fixed
// words, configured route names and durations; the question it is handed is
// for its kind, route, reversibility and times, never for its text or ids.
// Its methods are called inline and must not block.
type Observer interface {
	// Asked: q was parked (a repeat of an earlier ask is not a new ask).
	Asked(q *Question)
	// Refused: door ("ask" or "answer") turned an attempt away for reason,
	// one of the Refused* words.
	Refused(door, reason string)
	// Resolved: one pass through the chokepoint, its Resolve* result and
	// how long it took.
	Resolved(result string, took time.Duration)
	// Closed: q has just closed; its Resolution says how, by whom, when.
	Closed(q *Question)
	// Delivered: one delivery attempt for surface and its Delivery* result;
	// retryAfter is the platform's requested pause when rate-limited.
	Delivered(surface Surface, result string, retryAfter time.Duration)
	// Woke: a parked waiter saw its question closed, after this long.
	Woke(after time.Duration)
	// Parked: delta is +1 when a waiter parks and -1 when it returns.
	Parked(delta int)
	// Unrecorded: an event of kind that goes with no change of state (a
	// refusal, a delivery given up on, a standing approval granted,
	// revoked or ended) could not be appended, because the store failed.
	// What it records stands; only its line in the log is missing, and
	// this is how an operator hears of it (appendAside).
	Unrecorded(kind EventKind)
}

// Results of one pass through the chokepoint.
const (
	ResolveClosed   = "closed"    // this attempt closed the question
	ResolveRecorded = "recorded"  // form items recorded; the form is still open
	ResolveLost     = "lost"      // it came after the race was won: the question, or the part it answers, closed already
	ResolveRefused  = "forbidden" // this decider may not answer here
	ResolveInvalid  = "invalid"   // the input broke a rule
	ResolveNotFound = "not_found" // no such question (or not the caller's)
	ResolveError    = "error"     // the store failed, or the question changed too fast to take it
)

// Reasons for a refusal.
const (
	RefusedInvalid   = "invalid"   // the input broke a rule
	RefusedConflict  = "conflict"  // an ask into an ended run, or a repeat with another body
	RefusedForbidden = "forbidden" // not a decider for this question here
	RefusedClosed    = "closed"    // answered, declined, timed out or cancelled already, or the part answered was (a form item, a call, the person's vote)
	RefusedExpired   = "expired"   // the question's run has ended
)

// Results of one delivery attempt.
const (
	DeliverySent        = "sent"         // done and acked
	DeliveryRetried     = "retried"      // failed, or the courier not ready (NotReady); handed out again later
	DeliveryRateLimited = "rate_limited" // the platform said slow down (429 and Retry-After)
	DeliveryGivenUp     = "given_up"     // dropped: permanent, or out of attempts
)

// SetObserver makes o hear what s does from now on. Call it before s
// serves anything; nil stops observing.
func (s *Service) SetObserver(o Observer) { s.observer = o }

// OutboxStat is how much one surface's outbox holds.
type OutboxStat struct {
	Depth  int       // deliveries not yet acked
	Oldest time.Time // when the oldest of them was enqueued; zero if none
}

// OutboxStats is implemented by stores that can say how deep an outbox
// is, for metrics.
type OutboxStats interface {
	OutboxStat(ctx context.Context, surface Surface) (OutboxStat, error)
}

// The hooks below keep each call site in core to one line.

func (s *Service) observeAsk(q *Question, repeat bool, err error) {
	o := s.observer
	switch {
	case o == nil:
	case err == nil && !repeat:
		o.Asked(q)
	case ErrorCode(err) == CodeInvalid:
		o.Refused("ask", RefusedInvalid)
	case ErrorCode(err) == CodeConflict:
		o.Refused("ask", RefusedConflict)
	}
}

func (s *Service) observeResolve(start time.Time, a attempt, out Outcome, err error) {
	o := s.observer
	if o == nil {
		return
	}
	result := resolveResult(out, err)
	if result == ResolveClosed {
		o.Closed(out.Question)
	}
	// Refusals count people's answers turned away: an agent withdrawing a
	// question (or ending its run) that a person has just closed, and the
	// bridge losing a race, are no answer refused.
	if reason := refusalOf(result, err); reason != "" && a.door == doorHuman {
		o.Refused("answer", reason)
	}
	o.Resolved(result, time.Since(start))
}

// refusalOf is the Refused* reason of an answer whose pass through the
// chokepoint had result; "" for one that was not refused.
func refusalOf(result string, err error) string {
	switch result {
	case ResolveLost:
		if closed, _ := errors.AsType[*ClosedError](err); closed != nil && closed.Question != nil && closed.Question.State == StateExpired {
			return RefusedExpired
		}
		return RefusedClosed
	case ResolveRefused:
		return RefusedForbidden
	case ResolveInvalid:
		return RefusedInvalid
	}
	return ""
}

// resolveResult is the Resolve* word for one pass through the chokepoint.
func resolveResult(out Outcome, err error) string {
	var closed *ClosedError
	switch {
	case err == nil && out.Closed:
		return ResolveClosed
	case err == nil:
		return ResolveRecorded
	case errors.As(err, &closed), errors.Is(err, errDecidedAlready), errors.Is(err, errDecidedFirst):
		return ResolveLost // to another act, or a repeat of the ask that raced it
	case ErrorCode(err) == CodeForbidden:
		return ResolveRefused
	case errors.Is(err, errTooFast):
		return ResolveError
	case ErrorCode(err) == CodeInvalid, ErrorCode(err) == CodeConflict:
		return ResolveInvalid
	case ErrorCode(err) == CodeNotFound:
		return ResolveNotFound
	}
	return ResolveError
}

// observeDelivery mirrors the drain's handling of a delivery's error
// (core/loops). A courier not ready yet ([NotReady]) is retried, not
// rate limited: the platform named no wait, so none is reported.
func (s *Service) observeDelivery(d Delivery, err error, dropped bool) {
	o := s.observer
	if o == nil {
		return
	}
	var ra *RetryAfter
	switch {
	case err == nil:
		o.Delivered(d.Surface, DeliverySent, 0)
	case dropped:
		o.Delivered(d.Surface, DeliveryGivenUp, 0)
	case errors.As(err, &ra):
		o.Delivered(d.Surface, DeliveryRateLimited, ra.After)
	default:
		o.Delivered(d.Surface, DeliveryRetried, 0)
	}
}

// appendAside appends e, an event that goes with no change of state. The
// act it records has already happened (an honest refusal, a delivery
// given up on, a standing approval stored), so a store error must not
// turn it into a failure; it is reported to the observer instead of
// being dropped unheard.
func (s *Service) appendAside(ctx context.Context, e Event) {
	if _, err := s.store.Append(ctx, e); err != nil && s.observer != nil {
		s.observer.Unrecorded(e.Kind)
	}
}

// observeWake is told each question a waiter read; it reports a wake when
// the waiter had seen the question open and now sees it closed.
func (s *Service) observeWake(q *Question, sawOpen bool) {
	if s.observer != nil && sawOpen && q != nil && !q.Open() && q.Resolution != nil {
		s.observer.Woke(s.now().Sub(q.Resolution.At))
	}
}

// observePark counts a parked waiter until the returned func is called.
func (s *Service) observePark() func() {
	o := s.observer
	if o == nil {
		return func() {}
	}
	o.Parked(1)
	return func() { o.Parked(-1) }
}

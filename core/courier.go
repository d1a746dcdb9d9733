package core

import (
	"context"
	"errors"
	"time"
)

// Courier carries deliveries to one chat platform. Each chat adapter
// implements it; core/loops' Deliver drives it from the outbox. A
// Courier renders from the question as it stands when the delivery runs,
// so an update always shows the latest state, however late it runs.
type Courier interface {
	Surface() Surface
	// Post puts q's card in card.Room and returns the posted message:
	// card as given (its surface, room, kind, delivery key and repeat
	// mark, which core/card reads) with the platform's message id, and the
	// room the platform names it by if that differs. Kind is DeliverPost
	// or DeliverEscalate (an escalation posts the card in the escalation
	// route's room).
	Post(ctx context.Context, q *Question, card MessageRef) (MessageRef, error)
	// Update edits a card to show q as it now stands: progress of a form,
	// or who answered what and when, with the buttons removed. card is
	// the recorded card, kind included, so its markers stay.
	Update(ctx context.Context, q *Question, card MessageRef) error
	// Remind posts a reminder of a still-open q in room.
	Remind(ctx context.Context, q *Question, room string) error
	// Digest posts a "while you were away" summary in room.
	Digest(ctx context.Context, d Digest, room string) error
}

// RetryAfter is returned by a Courier when the platform asked it to slow
// down: that delivery is due again after After, and no sooner, while the
// other deliveries go on (an After of 0 names no wait: the drain's
// back-off is waited). It uses up no attempt; the drain bounds such
// retries by the delivery's age (core/loops' RateLimitedFor).
type RetryAfter struct {
	After time.Duration
	Err   error
}

func (e *RetryAfter) Error() string { return "rate limited: " + e.Err.Error() }
func (e *RetryAfter) Unwrap() error { return e.Err }

// NotReady is returned by a Courier that cannot send yet because it has
// not started (Telegram's adapter before getMe has answered): nothing
// was sent, and the platform asked for no wait, so it is no rate limit
// (the metrics count it as retried, with no platform wait). Like a
// RetryAfter it uses up no attempt and is bounded by the delivery's age
// instead (core/loops' RateLimitedFor): a platform that cannot be
// reached at start for longer than eight attempts' back-off drops no
// card, whose delivery goes out once the courier is ready. The delivery
// is due again after After (0: the drain's back-off).
type NotReady struct {
	After time.Duration
	Err   error
}

func (e *NotReady) Error() string { return "not ready: " + e.Err.Error() }
func (e *NotReady) Unwrap() error { return e.Err }

// Permanent marks a Courier error that retrying cannot fix (the channel is
// gone, the bot was removed): the delivery is dropped and reported.
type Permanent struct{ Err error }

func (e *Permanent) Error() string { return "permanent: " + e.Err.Error() }
func (e *Permanent) Unwrap() error { return e.Err }

// NotSent marks a Courier error that the platform answered with, so
// nothing was posted: the attempt can be retried without a card possibly
// appearing twice. RetryAfter, NotReady and Permanent are not-sent too. Any other
// error (a timeout, a dropped connection) leaves it unknown whether the
// platform acted.
type NotSent struct{ Err error }

func (e *NotSent) Error() string { return e.Err.Error() }
func (e *NotSent) Unwrap() error { return e.Err }

// notSent reports whether err says the platform did not act.
func notSent(err error) bool {
	var ns *NotSent
	var ra *RetryAfter
	var nr *NotReady
	var perm *Permanent
	return errors.As(err, &ns) || errors.As(err, &ra) || errors.As(err, &nr) || errors.As(err, &perm)
}

package core

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Courier carries deliveries to one chat platform. Each chat adapter
// implements it; Deliver drives it from the outbox. A Courier renders from
// the question as it stands when the delivery runs, so an update always
// shows the latest state, however late it runs.
type Courier interface {
	Surface() Surface
	// Post puts q's card in card.Room and returns the posted message:
	// card as given (its surface, room, kind, delivery key and repeat
	// mark, which NewCard reads) with the platform's message id, and the
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
// down; Deliver pauses that long before the next delivery.
type RetryAfter struct {
	After time.Duration
	Err   error
}

func (e *RetryAfter) Error() string { return "rate limited: " + e.Err.Error() }
func (e *RetryAfter) Unwrap() error { return e.Err }

// Permanent marks a Courier error that retrying cannot fix (the channel is
// gone, the bot was removed): the delivery is dropped and reported.
type Permanent struct{ Err error }

func (e *Permanent) Error() string { return "permanent: " + e.Err.Error() }
func (e *Permanent) Unwrap() error { return e.Err }

// DeliverOptions tune the outbox loop.
type DeliverOptions struct {
	Consumer string        // this replica's consumer name
	Batch    int           // deliveries claimed at once; default 10
	MinIdle  time.Duration // a claim idle this long is presumed dead; default 1m
	Block    time.Duration // how long a claim waits for new work; default 1s
	// MaxAttempts drops a delivery after this many hand-outs; default 8.
	MaxAttempts int
	// OnError hears every failed delivery (for logs); may be nil.
	OnError func(d Delivery, err error)
}

// Deliver drains the outbox for c's surface until ctx ends: at least once
// (a delivery is acked only after it succeeded, so a crash hands it to
// another consumer), and never silently twice (a post whose card is already
// recorded under the same delivery key is not posted again).
func (s *Service) Deliver(ctx context.Context, c Courier, o DeliverOptions) error {
	if o.Consumer == "" {
		o.Consumer = "askbridge"
	}
	if o.Batch <= 0 {
		o.Batch = 10
	}
	if o.MinIdle <= 0 {
		o.MinIdle = time.Minute
	}
	if o.Block <= 0 {
		// Short, because a blocked claim on Redis does not notice ctx
		// ending: this bounds how long a stopping bridge waits for it.
		o.Block = time.Second
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 8
	}
	report := o.OnError
	if report == nil {
		report = func(Delivery, error) {}
	}
	surface := c.Surface()
	for ctx.Err() == nil {
		ds, err := s.store.Claim(ctx, surface, o.Consumer, o.Batch, o.MinIdle, o.Block)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			report(Delivery{Surface: surface}, Internal("claim", err))
			if !sleep(ctx, time.Second) {
				return nil
			}
			continue
		}
		for _, d := range ds {
			err := s.deliverOne(ctx, c, d)
			var ra *RetryAfter
			var perm *Permanent
			switch {
			case err == nil:
			case errors.As(err, &perm) || d.Attempts >= o.MaxAttempts:
				// Dropped: retrying cannot help, or has not. Recorded
				// first, so whoever hears the report finds the record.
				s.undelivered(ctx, d, err)
				report(d, err)
			case errors.As(err, &ra):
				report(d, err)
				if !sleep(ctx, ra.After) {
					return nil
				}
				continue // not acked: handed out again after MinIdle
			default:
				report(d, err)
				continue
			}
			actx, cancel := settle(ctx) // done is done, even while stopping
			if err := s.store.Ack(actx, surface, d.ID); err != nil {
				report(d, Internal("ack", err))
			}
			cancel()
		}
	}
	return nil
}

func (s *Service) deliverOne(ctx context.Context, c Courier, d Delivery) error {
	if d.Kind == DeliverDigest {
		dg, err := s.Digest(ctx, DigestQuery{From: d.Since, To: d.CreatedAt, Route: d.Route})
		if err != nil {
			return err
		}
		if len(dg.Asked)+len(dg.Closed)+len(dg.Open) == 0 {
			return nil // nothing happened: no digest to post
		}
		return c.Digest(ctx, dg, d.Room)
	}
	q, err := s.Get(ctx, d.QuestionID)
	if ErrorCode(err) == CodeNotFound {
		return &Permanent{Err: err} // purged meanwhile
	}
	if err != nil {
		return err
	}
	switch d.Kind {
	case DeliverPost, DeliverEscalate:
		for _, m := range q.Messages {
			if m.Delivery == d.Key {
				return nil // posted and recorded before a crash: done
			}
		}
		// Mark the attempt before posting: if a mark is already there, an
		// earlier attempt got this far and may have posted a card it never
		// recorded, and the new card's record says so.
		first, err := s.store.Once(ctx, "posting:"+d.Key, 30*24*time.Hour)
		if err != nil {
			return err
		}
		want := MessageRef{Surface: c.Surface(), Room: d.Room, Delivery: d.Key, Kind: d.Kind, Repeat: !first}
		ref, err := c.Post(ctx, q, want)
		if err != nil {
			return err
		}
		// The card exists now: record it even if we are shutting down,
		// or it would never be edited and the retry would post it again.
		rctx, cancel := settle(ctx)
		defer cancel()
		ref.Surface, ref.Delivery, ref.Kind, ref.Repeat = want.Surface, want.Delivery, want.Kind, want.Repeat
		_, err = s.recordMessage(rctx, q.ID, ref, ref.Repeat)
		return err
	case DeliverUpdate:
		if d.Message == nil {
			return &Permanent{Err: errors.New("update delivery without a message")}
		}
		return c.Update(ctx, q, *d.Message)
	case DeliverRemind:
		if !q.Open() {
			return nil // answered before the reminder went out
		}
		return c.Remind(ctx, q, d.Room)
	}
	return &Permanent{Err: errors.New("unknown delivery kind " + string(d.Kind))}
}

// undelivered records a delivery given up on in the question's event log.
// The reason is the platform's error, which carries no person's text.
func (s *Service) undelivered(ctx context.Context, d Delivery, cause error) {
	if d.QuestionID == "" {
		return // a digest belongs to no question; the log line is its record
	}
	actx, cancel := settle(ctx)
	defer cancel()
	reason := cause.Error()
	if len(reason) > 300 {
		reason = reason[:300]
	}
	payload, _ := json.Marshal(map[string]any{"delivery": d.Key, "kind": d.Kind, "room": d.Room, "attempts": d.Attempts})
	_, _ = s.store.Append(actx, Event{QuestionID: d.QuestionID, At: s.now(), Kind: EventUndelivered,
		Surface: d.Surface, Reason: reason, Payload: payload})
}

// settle is a context for the bookkeeping that must follow work already
// done on a platform (recording a posted card, acking a delivery): it
// outlives ctx's cancellation, bounded by a few seconds.
func settle(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
}

// FirstSeen reports whether an inbound platform event (a Slack event id, a
// Discord interaction id, a Telegram update id: key names it) is new to
// every replica of the bridge within ttl, so a platform's redelivery is
// handled once. If the store cannot say, the event counts as new: losing a
// person's click is worse than handling it twice, and the chokepoint makes
// a repeated click harmless.
func (s *Service) FirstSeen(ctx context.Context, key string, ttl time.Duration) bool {
	first, err := s.store.Once(ctx, "seen:"+key, ttl)
	return first || err != nil
}

// sleep waits d or until ctx ends; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
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

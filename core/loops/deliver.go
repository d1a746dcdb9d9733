package loops

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/askbridge/askbridge/core"
)

// DeliverOptions tune the outbox loop.
type DeliverOptions struct {
	Consumer string // this replica's consumer name
	// Batch is how many deliveries are claimed at once; default 10. It
	// sets the loop's bounds too (rooms.go): one room holds at most two
	// batches (more claimed for it go back to the outbox for a little
	// while; three with those coming back from there), and the loop
	// claims no more while four batches' worth of rooms have a send out.
	Batch int
	// MinIdle is how long a claim may go without a heartbeat before its
	// consumer is presumed dead and another takes it over; default 10s.
	// A live consumer renews its claims every MinIdle/3 while it sends, so
	// a slow send is never taken from it.
	MinIdle time.Duration
	Block   time.Duration // how long a claim waits for new work; default 1s
	// MaxAttempts drops a delivery after this many attempts; default 8.
	// A platform's retry-after is no attempt (RateLimitedFor).
	MaxAttempts int
	// GiveUpAfter, when set, replaces MaxAttempts: a delivery is retried
	// until it is this old (since it was enqueued), then dropped with an
	// undelivered event. Webhooks use it (webhooks.give_up_after).
	GiveUpAfter time.Duration
	// RateLimitedFor bounds the retries of a delivery the platform
	// answers with a retry-after (core.RetryAfter), whose courier is
	// not ready yet (core.NotReady), or that the store failed where the
	// platform is not to blame (core.StoreFailed), which count as no
	// attempt: it is due again when the platform says, or after a
	// back-off, until it is this old (since it was enqueued), then
	// dropped with an undelivered event; default DefaultRateLimitedFor.
	// GiveUpAfter, when set, bounds these too.
	RateLimitedFor time.Duration
	// RetryWait is the wait after the first failed attempt that named no
	// wait of its own, doubling with each attempt up to 2m; default 2s.
	RetryWait time.Duration
	// Budget, when set, holds sends to the budgets the courier names (it
	// must implement core.Budgeted) across every replica sharing the store.
	Budget core.Budget
	// OnError hears every failed delivery (for logs); may be nil. The
	// rooms go at once, so it may be called from several goroutines at
	// once.
	OnError func(d core.Delivery, err error)
}

// DefaultRateLimitedFor is DeliverOptions.RateLimitedFor's default: a
// day, as long as a webhook is retried by default (webhooks.give_up_after),
// well past any platform's rate limit or outage a card is still worth
// posting after.
const DefaultRateLimitedFor = 24 * time.Hour

// DefaultMinIdle is DeliverOptions.MinIdle's default: a dead replica's
// deliveries are taken over within about this long.
const DefaultMinIdle = 10 * time.Second

// Deliver drains the outbox for c's surface until ctx ends: at least once
// (a delivery is acked only after it succeeded, so a crash hands it to
// another consumer), and never silently twice (a post whose card is already
// recorded under the same delivery key is not posted again: each delivery
// goes through svc.DeliverOne, the domain's part of it).
//
// One room waiting never holds up another: a delivery that must wait (a
// platform's Retry-After, a spent budget, a back-off after a failure) goes
// back to the outbox due at that time, and the loop carries on with the
// rest; and the loop waits at most a second (slowSend) for a platform's
// answer before it claims past that room (rooms.go), so a room whose
// sends hang holds up only its own deliveries. When ctx ends, what was
// claimed and not sent is handed back at once, so another replica takes
// it without waiting for MinIdle; all of it within one deadline
// (stop.go), so a store that does not answer holds the stop up for
// seconds, not for each delivery held.
func Deliver(ctx context.Context, svc *core.Service, c core.Courier, o DeliverOptions) error {
	s := &drain{svc: svc, store: svc.Claims()}
	if o.Consumer == "" {
		o.Consumer = "askbridge"
	}
	if o.Batch <= 0 {
		o.Batch = 10
	}
	if o.MinIdle <= 0 {
		o.MinIdle = DefaultMinIdle
	}
	if o.Block <= 0 {
		// Short, because a blocked claim on Redis does not notice ctx
		// ending: this bounds how long a stopping bridge waits for it.
		o.Block = time.Second
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 8
	}
	if o.RetryWait <= 0 {
		o.RetryWait = 2 * time.Second
	}
	if o.RateLimitedFor <= 0 {
		o.RateLimitedFor = DefaultRateLimitedFor
	}
	if o.OnError == nil {
		o.OnError = func(core.Delivery, error) {}
	}
	surface := c.Surface()
	budgets, _ := c.(core.Budgeted)
	if o.Budget == nil {
		budgets = nil
	}
	defer func() {
		// After the rooms' hand-backs (the defer below), within the
		// stop's one deadline (stop.go).
		defer s.stop.release()
		if !s.stop.handedBack(surface, o) {
			return // it still holds claims: Leave would keep it
		}
		lctx, cancel := s.stop.settle(ctx)
		defer cancel()
		if err := s.store.Leave(lctx, surface, o.Consumer, 10*o.MinIdle); err != nil {
			o.OnError(core.Delivery{Surface: surface}, core.Internal("leave", err))
		}
	}()
	held := newRooms(s, c, budgets, o, &handBacks{})
	beat := make(chan struct{})
	go func() { defer close(beat); held.heartbeat(ctx) }()
	defer func() {
		held.workers.Wait() // before Leave: the rooms still sending hand back
		<-beat
	}()
	for held.ready(ctx) {
		at := svc.Now()
		ds, err := s.store.Claim(ctx, surface, o.Consumer, o.Batch, o.MinIdle, o.Block)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			o.OnError(core.Delivery{Surface: surface}, core.Internal("claim", err))
			if !Sleep(ctx, time.Second) {
				return nil
			}
			continue
		}
		held.take(ctx, ds, at)
	}
	return nil
}

// drain is one Deliver loop: the service whose outbox it drains, and that
// outbox's claims (core.Service.Claims).
type drain struct {
	svc   *core.Service
	store core.Claims
	stop  stopping // the hand-backs' one deadline once ctx ends
	// lettingGo hears that a delivery held is about to be acked or
	// handed back (rooms.lettingGo); nil hears nothing.
	lettingGo func(id string)
}

// deliverClaimed carries out one claimed delivery: it waits in the
// outbox if its budget is spent, is sent, and is acked, retried later or
// dropped as its outcome says. Its budgets are asked first, spending
// nothing (a delivery not due goes back at once, without the store's
// work for its send), and spent in DeliverOne's gate, right before the
// courier's call. p hears when its budgets have decided (it waits in
// place, is handed back, or goes) and when the courier's call goes out,
// for the loop's next claim (rooms.go).
func (s *drain) deliverClaimed(ctx context.Context, c core.Courier, budgets core.Budgeted, d core.Delivery, o DeliverOptions, hb *handBacks, p progress) {
	defer p.granted()
	if budgets != nil {
		if wait := s.dueLater(ctx, budgets.Budgets(d), d, o, hb, p.granted); wait > 0 {
			p.granted()
			d.Attempts-- // not attempted
			s.retry(ctx, d, o, wait)
			return
		}
	}
	taken := false
	var spent []core.Allowance // by the gate's last pass (refund)
	gate := func(ctx context.Context) time.Duration {
		spent = spent[:0]
		wait := claimGate(ctx, p, d, o, &taken)
		if wait == 0 {
			wait = s.spend(ctx, budgets, d, o, hb, &spent)
		}
		if wait == 0 && ctx.Err() != nil {
			wait = handBackNow // stopped while the store answered (stop.go)
		}
		if wait > 0 {
			refund(ctx, d, o, spent) // nothing goes out on this pass
			spent = spent[:0]
			p.granted()
		} else {
			p.sending()
		}
		return wait
	}
	err := s.deliverOne(ctx, c, d, gate)
	if _, unspent := errors.AsType[*core.Unspent](err); unspent {
		refund(ctx, d, o, spent)
	}
	if taken {
		// Another consumer holds it (owned.go): its send, ack or
		// hand-back is that consumer's, and a retry here would be
		// refused.
		s.letGo(d.ID)
		o.OnError(d, core.Internal("deliver", errTakenOver))
		return
	}
	if ny := (*core.NotYet)(nil); errors.As(err, &ny) {
		d.Attempts-- // not attempted
		s.retry(ctx, d, o, ny.After)
		return
	}
	if perm := (*core.Permanent)(nil); err != nil && ctx.Err() != nil && !errors.As(err, &perm) {
		// Stopping cut the send short; the platform did not refuse it.
		// It is handed back due at once, its attempt not counted, for
		// the next drain (on any replica) to send: a stop never uses up
		// a delivery's last attempt.
		d.Attempts--
		s.retry(ctx, d, o, 0)
		return
	}
	drop := err != nil && s.givesUp(d, err, o)
	if drop && !holdsToGiveUp(ctx, p, d, o) {
		// Another consumer took it over while this attempt was out
		// (owned.go): the delivery is that consumer's, which may have
		// delivered it, so the give-up is not this one's to record.
		// The attempt failed all the same, and the delivery is handed
		// out again: to that consumer.
		s.svc.Attempted(ctx, d, err, false)
		s.letGo(d.ID)
		o.OnError(d, core.Internal("deliver", fmt.Errorf("%w: %w", errGiveUpTakenOver, err)))
		return
	}
	s.svc.Attempted(ctx, d, err, drop)
	var sf *core.StoreFailed
	wait, waitAsked := asksWait(err)
	switch {
	case err == nil:
	case drop:
		// Dropped: retrying cannot help, or has not. Attempted
		// recorded it first, so whoever hears the report finds the
		// record.
		o.OnError(d, err)
	case waitAsked:
		// The platform asked for a wait, or the courier is not ready
		// yet: the delivery is due again when it says (DESIGN: Running
		// it as a service), and the answer uses up no attempt; its age
		// bounds it instead (givesUp). One that names no wait (a
		// Retry-After of 0) waits the back-off: uncounted, it would
		// otherwise be sent again at once, as fast as the drain goes,
		// for as long as the platform pushes back.
		o.OnError(d, err)
		if !d.CreatedAt.IsZero() {
			d.Attempts--
		}
		if wait <= 0 {
			wait = backoff(o.RetryWait, d.Attempts)
		}
		// Bounded as a failure's named wait is: asked again at the
		// bound, a platform still pushing back only says so again, which
		// costs no attempt.
		s.retry(ctx, d, o, min(wait, maxNamedWait))
		return
	case errors.As(err, &sf) && !d.CreatedAt.IsZero():
		// The store failed it where the platform is not to blame (the
		// question's read, the posting mark): no attempt, however long
		// the store is away; its age bounds it instead (givesUp), and
		// its wait grows with its age, so a store that is away for
		// long is not asked again every two seconds for each delivery.
		o.OnError(d, err)
		d.Attempts--
		s.retry(ctx, d, o, storeWait(o.RetryWait, s.svc.Now().Sub(d.CreatedAt)))
		return
	default:
		o.OnError(d, err)
		s.retry(ctx, d, o, failedWait(err, o.RetryWait, d.Attempts))
		return
	}
	actx, cancel := core.Settle(ctx) // done is done, even while stopping
	s.letGo(d.ID)
	if err := s.store.Ack(actx, d.Surface, d.ID); err != nil {
		o.OnError(d, core.Internal("ack", err))
	}
	cancel()
}

// deliverOne is svc.DeliverOne, with a panic under it (a courier's bug
// that one question's content sets off) made the attempt's error, one
// of unknown outcome like any other: retried, flagged as a possible
// repeat, and given up after MaxAttempts with an undelivered event.
// Left to end the process, the delivery, still claimed, was taken over
// after MinIdle by another replica and ended that one too, round every
// replica for ever, since a panic used up no attempt.
func (s *drain) deliverOne(ctx context.Context, c core.Courier, d core.Delivery, gate func(context.Context) time.Duration) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicked(v)
		}
	}()
	return s.svc.DeliverOne(ctx, c, d, gate)
}

// panicked is the error of an attempt that panicked with v, saying
// where: the first frame of the panicking goroutine past runtime's own
// (below runtime.gopanic), so the log says what to fix. It is called
// from the deferred recover, while that stack is still there.
func panicked(v any) error {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(1, pcs)])
	inPanic := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			inPanic = true
		case inPanic && !strings.HasPrefix(f.Function, "runtime."):
			return fmt.Errorf("panic while delivering: %v (at %s, %s:%d)", v, f.Function, filepath.Base(f.File), f.Line)
		}
		if !more {
			return fmt.Errorf("panic while delivering: %v", v)
		}
	}
}

// asksWait reports whether err uses up no attempt because it asks the
// delivery to wait: the platform's retry-after (core.RetryAfter), or a
// courier not ready yet (core.NotReady); and the wait it names (0: none).
func asksWait(err error) (time.Duration, bool) {
	if ra, ok := errors.AsType[*core.RetryAfter](err); ok {
		return ra.After, true
	}
	if nr, ok := errors.AsType[*core.NotReady](err); ok {
		return nr.After, true
	}
	return 0, false
}

// givesUp reports whether a failed delivery is dropped: retrying cannot
// help (core.Permanent), or it has been tried enough (MaxAttempts, or for
// GiveUpAfter since it was enqueued). A platform's retry-after, or a
// courier not ready yet (asksWait), is no failed attempt: such a
// delivery is dropped only once it is older than RateLimitedFor (or
// GiveUpAfter, when set), so that a platform pushing back for a few
// minutes (eight 429s, or Telegram's adapter waiting for getMe at start)
// drops nothing, and one pushing back for ever does not keep it for
// ever. Nor is the store's own failure (core.StoreFailed):
// on Redis Cluster every posting mark lives on one shard, and that shard
// failing over for a few minutes dropped every new card, the platform
// never tried. One with no time of its own (CreatedAt, which core always
// sets) counts these as attempts instead.
func (s *drain) givesUp(d core.Delivery, err error, o DeliverOptions) bool {
	var perm *core.Permanent
	var sf *core.StoreFailed
	_, waitAsked := asksWait(err)
	switch {
	case errors.As(err, &perm):
		return true
	case o.GiveUpAfter > 0:
		return s.svc.Now().Sub(d.CreatedAt) >= o.GiveUpAfter
	case (waitAsked || errors.As(err, &sf)) && !d.CreatedAt.IsZero():
		return s.svc.Now().Sub(d.CreatedAt) >= o.RateLimitedFor
	}
	return d.Attempts >= o.MaxAttempts
}

// retry puts d back in the outbox, due after wait; it outlives ctx, as an
// ack does, so a stopping replica still hands back what it holds, all of
// it within one deadline (stop.go): one not handed back by then is
// counted, and reported with the others once the drain has stopped.
func (s *drain) retry(ctx context.Context, d core.Delivery, o DeliverOptions, wait time.Duration) {
	rctx, cancel := s.stop.settle(ctx)
	defer cancel()
	if d.Attempts < 0 {
		d.Attempts = 0
	}
	err := rctx.Err() // the stop's deadline has passed: not asked
	if err == nil {
		s.letGo(d.ID)
		err = s.store.Retry(rctx, d, o.Consumer, wait)
	}
	switch {
	case err == nil:
	case ctx.Err() != nil:
		s.stop.missed.Add(1)
	default:
		// Left claimed: it comes back to someone after MinIdle.
		o.OnError(d, core.Internal("retry", err))
	}
}

// letGo tells the rooms that d's claim is about to end (an ack or a
// hand-back), so that a claim handing it out again is a new one.
func (s *drain) letGo(id string) {
	if s.lettingGo != nil {
		s.lettingGo(id)
	}
}

// backoff is the wait after a failed attempt that named no wait of its
// own: base (2s by default), doubling, at most 2m, so eight attempts span
// about four minutes, long enough to ride out a platform's brief outage.
func backoff(base time.Duration, attempts int) time.Duration {
	d := base
	for i := 1; i < attempts && d < 2*time.Minute; i++ {
		d *= 2
	}
	return min(d, 2*time.Minute)
}

// namesWait is a courier's error of unknown outcome that says how long
// the platform asked to be left alone: a 5xx with a Retry-After. Unlike
// core.RetryAfter (a refusal, so nothing was posted) the platform may
// have acted, so it is a failed attempt like any other, but sending it
// again sooner than asked would only meet the same answer.
type namesWait interface {
	error
	RetryWait() time.Duration
}

// maxNamedWait bounds the wait a platform names, failing (namesWait) or
// refusing (core.RetryAfter), so that one naming hours parks no card past
// its question's use.
const maxNamedWait = 10 * time.Minute

// failedWait is the wait after a failed attempt: backoff's, or what the
// platform named (namesWait) when that is longer, up to maxNamedWait.
func failedWait(err error, base time.Duration, attempts int) time.Duration {
	wait := backoff(base, attempts)
	if nw, ok := errors.AsType[namesWait](err); ok {
		wait = max(wait, min(nw.RetryWait(), maxNamedWait))
	}
	return wait
}

// storeWait is the wait after the store failed a delivery of this age
// (core.StoreFailed): half its age, at least base and at most 2m, as
// backoff's; a count of attempts would do, but these use up none.
func storeWait(base, age time.Duration) time.Duration {
	return min(max(base, age/2), 2*time.Minute)
}

// progress hears how a delivery's turn goes (rooms.go's turn): granted
// once its budgets have decided, sending once the courier's call goes
// out; and it tells whether the delivery is still this consumer's claim
// (owned.go) right before that call.
type progress interface {
	granted()
	sending()
	stillClaimed(ctx context.Context, id string) (bool, error)
}

// Sleep waits d or until ctx ends; it reports whether ctx is still live.
// It is the one such wait: the loops and the adapters' own retry loops
// use it.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

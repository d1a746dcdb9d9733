package loops

import (
	"context"
	"errors"
	"time"

	"github.com/askbridge/askbridge/core"
)

// A replica frozen past MinIdle (a GC pause, a stopped VM) may find, as
// it goes on, that another consumer has taken its claims over. The
// heartbeat hears so at its next renewal and drops them from the
// rooms' queues (rooms.heartbeat), but a room's current delivery, on
// its way to the courier's call, went out before that answer: a second
// copy, unflagged (law 4). So right before the call each delivery's
// claim is checked, but only when the drain has not heard it confirmed
// for a while (claimCheckAfter): claimed or renewed since, it is still
// this consumer's, as another consumer takes a claim only once it has
// idled MinIdle; in the usual case the check costs nothing, and after
// a freeze, one renewal of that claim. What is left is the freeze that
// falls between the check and the call, which no store can fence.
//
// The other way round, a store that was away past MinIdle may hand a
// consumer's own claims back to it, under the same ids, when its claim
// reaches the store before its next renewal. Those it still holds and
// has not let go (acked or handed back: lettingGo) are the same claims,
// already queued or on their way, and take does not queue them again.

// errTakenOver is what the drain reports of a delivery it did not send
// because another consumer had taken its claim over.
var errTakenOver = errors.New("its claim was taken over by another consumer (this replica was held up past MinIdle): not sent here")

// errGiveUpTakenOver is what the drain reports of a delivery whose last
// attempt failed after another consumer had taken its claim over.
var errGiveUpTakenOver = errors.New("its claim was taken over by another consumer while its last attempt was out (this replica was held up past MinIdle): not given up here, the delivery is that consumer's")

// holdsToGiveUp reports whether d, whose attempt failed for the last
// time, is still this consumer's claim (stillClaimed), so that its
// give-up is this consumer's to record. A consumer frozen past MinIdle
// while its send was out may find on waking that another consumer took
// the delivery over and delivered it: its own failure then recorded the
// delivery as undelivered (the event, the metric) in a question's
// history that shows it delivered, while its ack, rightly, changed
// nothing. The check is the send's (a renewal, unless the claim was
// confirmed within claimCheckAfter), and outlives a stopping ctx as the
// ack does. A store that cannot say lets the give-up go ahead: a
// take-over needs MinIdle without a renewal, so the consumer that asks
// is most likely still the holder, and a give-up not recorded would
// leave the delivery's loss unheard (law 8).
func holdsToGiveUp(ctx context.Context, p progress, d core.Delivery, o DeliverOptions) bool {
	cctx, cancel := core.Settle(ctx)
	defer cancel()
	ok, err := p.stillClaimed(cctx, d.ID)
	if err != nil {
		o.OnError(d, core.Internal("extend", err))
		return true
	}
	return ok
}

// claimCheckAfter is how long after a claim was last confirmed its
// delivery's send checks it first: half of MinIdle, past the
// heartbeat's MinIdle/3 and a renewal's round trip, well short of the
// idle limit that lets another consumer take it.
func (r *rooms) claimCheckAfter() time.Duration { return r.o.MinIdle / 2 }

// confirm records that the claims ids were this consumer's at at (a
// claim or renewal that began then), for those still held; r.mu is held.
func (r *rooms) confirm(at time.Time, ids ...string) {
	for _, id := range ids {
		if r.held[id] > 0 && at.After(r.confirmed[id]) {
			r.confirmed[id] = at
		}
	}
}

// stillClaimed reports whether delivery id is still this consumer's
// claim right before its send: at once if the claim was confirmed within
// claimCheckAfter, else by renewing it (the store's Extend, which says
// whether it still is). An error means the store could not say.
func (r *rooms) stillClaimed(ctx context.Context, id string) (bool, error) {
	r.mu.Lock()
	at := r.confirmed[id]
	r.mu.Unlock()
	now := r.s.svc.Now()
	if now.Sub(at) < r.claimCheckAfter() {
		return true, nil
	}
	lost, err := r.s.store.Extend(ctx, r.c.Surface(), r.o.Consumer, []string{id})
	if err != nil {
		return false, err
	}
	if len(lost) > 0 {
		return false, nil
	}
	r.mu.Lock()
	r.confirm(now, id)
	r.mu.Unlock()
	return true, nil
}

// claimGate is the first part of a delivery's gate (deliverClaimed):
// it reports how long d is to wait instead of being sent if its claim
// may not be this consumer's any more (stillClaimed), 0 if it is, and
// sets *taken when another consumer holds it, so the drain leaves it to
// that consumer rather than hand it back. A claim the store could not
// confirm goes back to the outbox after the back-off (the store's Retry
// leaves it alone if it is not this consumer's).
func claimGate(ctx context.Context, p progress, d core.Delivery, o DeliverOptions, taken *bool) time.Duration {
	ok, err := p.stillClaimed(ctx, d.ID)
	switch {
	case ok:
		return 0
	case err != nil && ctx.Err() != nil:
		return handBackNow // stopping (stop.go)
	case err != nil:
		o.OnError(d, core.Internal("extend", err))
		return o.RetryWait
	}
	*taken = true
	return time.Second // any wait: the drain drops it (deliverClaimed)
}

// renewed records a renewal of ids that began at began and answered that
// lost are no longer this consumer's: those are to be checked before
// their send (a room's current delivery is not dropped from its queue),
// and if the renewal answered for all (whole), the others are confirmed.
func (r *rooms) renewed(began time.Time, ids, lost []string, whole bool) {
	gone := make(map[string]bool, len(lost))
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range lost {
		gone[id] = true
		delete(r.confirmed, id)
	}
	for _, id := range ids {
		if whole && !gone[id] {
			r.confirm(began, id)
		}
	}
}

// lettingGo records that held delivery id is about to be acked or
// handed back: a claim that hands it out again from here on is a new
// one (take), not the same claim come back.
func (r *rooms) lettingGo(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held[id] > 0 {
		r.going[id] = true
	}
}

package loops

import (
	"context"
	"time"

	"github.com/askbridge/askbridge/core"
)

// Leases is the part of core.Values that Lead needs (core.Service.Values
// gives it to a door).
type Leases interface {
	Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error)
	Release(ctx context.Context, key, owner string) error
}

// DefaultLeaseTTL is how long a single connection's lease (the Telegram
// poller, the Discord gateway) lasts without renewal. The holder renews
// it every quarter of that and the others try as often, so when a holder
// dies another replica holds the lease within about 5 s.
const DefaultLeaseTTL = 4 * time.Second

// Lead runs fn while owner holds the lease key, on whichever replica wins
// it, until ctx ends. It tries for the lease every ttl/4; once held, it
// renews it as often, and ends fn's context when the lease is lost (a
// renewal refused, or none confirmed within ttl), then goes back to
// trying. When ctx ends it releases the lease at once, so a successor
// need not wait for it to lapse. A replica that restarts under the same
// owner takes its own lease straight back.
//
// fn is to run until its context ends. If it returns sooner (its
// connection gave up), the lease is released at once and this replica
// waits a ttl before trying again, so another replica, trying every
// ttl/4, takes the work over; renewed with nothing running under it, the
// lease kept the work from every replica for as long as this one lived.
//
// onChange, if set, hears each change of leadership (for logs and
// metrics): true when this replica takes the lease, false when it loses
// or gives it up.
func Lead(ctx context.Context, kv Leases, key, owner string, ttl time.Duration, fn func(context.Context), onChange func(bool)) {
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	if onChange == nil {
		onChange = func(bool) {}
	}
	every := ttl / 4
	defer release(ctx, kv, key, owner)
	for ctx.Err() == nil {
		sent := time.Now()
		held, err := kv.Lease(ctx, key, owner, ttl)
		if err != nil || !held {
			if !Sleep(ctx, every) {
				return
			}
			continue
		}
		onChange(true)
		lctx, lost := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			fn(lctx)
		}()
		ended := keep(lctx, kv, key, owner, ttl, sent, done, lost)
		lost()
		<-done
		if ended {
			release(ctx, kv, key, owner)
		}
		onChange(false)
		if ended && !Sleep(ctx, ttl) {
			return
		}
	}
}

// release gives up owner's lease key, even while ctx ends: a successor
// then need not wait for it to lapse.
func release(ctx context.Context, kv Leases, key, owner string) {
	rctx, cancel := core.Settle(ctx)
	defer cancel()
	_ = kv.Release(rctx, key, owner) // one lost only waits out the ttl
}

// keep renews the lease every ttl/4 until ctx ends, the lease is lost or
// the work under it ends on its own (done closes: it reports true), and
// then calls lost. The lease was last confirmed by a call sent at
// since. A renewal that errs is tried again; the lease is taken as lost
// when a renewal is refused, or when none sent within the last ttl has
// been confirmed, since by then another replica may hold it. That is
// timed from when each call was sent (the store's ttl runs from when it
// ran the call, no earlier) and does not wait for a call that hangs: a
// store that stops answering ends the lead on time.
func keep(ctx context.Context, kv Leases, key, owner string, ttl time.Duration, since time.Time, done <-chan struct{}, lost func()) (ended bool) {
	defer lost()
	type renewal struct {
		sent time.Time
		held bool
		err  error
	}
	renewed := make(chan renewal, 1) // a renewal still out when keep returns sends and ends
	pending := false
	expiry := time.NewTimer(time.Until(since.Add(ttl)))
	defer expiry.Stop()
	t := time.NewTicker(ttl / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-done:
			return ctx.Err() == nil
		case <-expiry.C:
			return false
		case r := <-renewed:
			pending = false
			if r.err != nil {
				break // tried again at the next tick
			}
			if !r.held {
				return false
			}
			expiry.Reset(time.Until(r.sent.Add(ttl)))
		case <-t.C:
			if pending {
				continue // the last renewal has not come back
			}
			pending = true
			go func(sent time.Time) {
				held, err := kv.Lease(ctx, key, owner, ttl)
				renewed <- renewal{sent, held, err}
			}(time.Now())
		}
	}
}

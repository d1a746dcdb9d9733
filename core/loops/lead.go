package loops

import (
	"context"
	"fmt"
	"time"

	"github.com/askbridge/askbridge/core"
)

// Leases is the part of core.Values that a Leader needs (core.Service.Values
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

// Leader is one replica's part in running a single connection (the
// Telegram poller, the Discord gateway) on whichever replica holds the
// lease Key (Run). The hooks are for logs and metrics; each may be nil.
type Leader struct {
	Leases Leases
	Key    string
	Owner  string
	// TTL is the lease's life unrenewed; default DefaultLeaseTTL.
	TTL time.Duration
	// OnChange hears each change of leadership: true when this replica
	// takes the lease, false when it loses or gives it up.
	OnChange func(held bool)
	// OnError hears the first lease call (a try or a renewal) that fails
	// after one that succeeded, or before any did: while the store fails,
	// this replica runs no connection, and if every replica shares the
	// failing store none does, so this is the line that says why the
	// platform went quiet. The calls that fail after it, four a TTL, are
	// not reported one by one. A renewal none confirmed within the TTL
	// (a store that stopped answering) counts as a failure.
	OnError func(err error)
	// OnRecover hears the first lease call that succeeds after OnError:
	// failed is how many calls failed meanwhile, down how long since the
	// first did.
	OnRecover func(failed int, down time.Duration)
}

// Run runs fn while l.Owner holds the lease l.Key, on whichever replica
// wins it, until ctx ends. It tries for the lease every TTL/4; once held,
// it renews it as often, and ends fn's context when the lease is lost (a
// renewal refused, or none confirmed within the TTL), then goes back to
// trying. When ctx ends it releases the lease at once, so a successor
// need not wait for it to lapse. A replica that restarts under the same
// owner takes its own lease straight back.
//
// fn is to run until its context ends. If it returns sooner (its
// connection gave up), the lease is released at once (once a renewal
// still out has come back, which would otherwise take it again) and
// this replica waits a TTL before trying again, so another replica,
// trying every TTL/4, takes the work over; renewed with nothing running
// under it, the lease kept the work from every replica for as long as
// this one lived.
func (l Leader) Run(ctx context.Context, fn func(context.Context)) {
	if l.TTL <= 0 {
		l.TTL = DefaultLeaseTTL
	}
	if l.OnChange == nil {
		l.OnChange = func(bool) {}
	}
	errs := &leaseErrors{onError: l.OnError, onRecover: l.OnRecover}
	every := l.TTL / 4
	defer l.release(ctx)
	for ctx.Err() == nil {
		sent := time.Now()
		held, err := l.Leases.Lease(ctx, l.Key, l.Owner, l.TTL)
		errs.saw(ctx, err)
		if err != nil || !held {
			if !Sleep(ctx, every) {
				return
			}
			continue
		}
		l.OnChange(true)
		lctx, lost := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			fn(lctx)
		}()
		ended := l.keep(lctx, sent, done, errs)
		lost()
		<-done
		if ended {
			l.release(ctx)
		}
		l.OnChange(false)
		if ended && !Sleep(ctx, l.TTL) {
			return
		}
	}
}

// release gives up the lease, even while ctx ends: a successor then need
// not wait for it to lapse.
func (l Leader) release(ctx context.Context) {
	rctx, cancel := core.Settle(ctx)
	defer cancel()
	_ = l.Leases.Release(rctx, l.Key, l.Owner) // one lost only waits out the ttl
}

// keep renews the lease every TTL/4 until ctx ends, the lease is lost or
// the work under it ends on its own (done closes: it reports true); the
// caller then ends ctx, the work's, and with it a renewal still out. The
// lease was last confirmed by a call sent at since. A renewal that errs
// is tried again; the lease is taken as lost when a renewal is refused,
// or when none sent within the last TTL has been confirmed, since by
// then another replica may hold it. That is timed from when each call
// was sent (the store's ttl runs from when it ran the call, no earlier)
// and does not wait for a call that hangs: a store that stops answering
// ends the lead on time. Each renewal's outcome goes to errs.
func (l Leader) keep(ctx context.Context, since time.Time, done <-chan struct{}, errs *leaseErrors) (ended bool) {
	type renewal struct {
		sent time.Time
		held bool
		err  error
	}
	renewed := make(chan renewal, 1) // a renewal still out when keep returns sends and ends
	pending := false
	expiry := time.NewTimer(time.Until(since.Add(l.TTL)))
	defer expiry.Stop()
	t := time.NewTicker(l.TTL / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-done:
			if ctx.Err() != nil {
				return false
			}
			if pending {
				// The caller releases the lease next: a renewal still
				// out would land after that and take the lease back,
				// with no work under it, from every replica for a TTL.
				// It is waited for, at most until the lease lapses.
				select {
				case r := <-renewed:
					errs.saw(ctx, r.err)
				case <-expiry.C:
				}
			}
			return true
		case <-expiry.C:
			errs.saw(ctx, fmt.Errorf("loops: no renewal of lease %s confirmed within %s", l.Key, l.TTL))
			return false
		case r := <-renewed:
			pending = false
			errs.saw(ctx, r.err)
			if r.err != nil {
				break // tried again at the next tick
			}
			if !r.held {
				return false
			}
			expiry.Reset(time.Until(r.sent.Add(l.TTL)))
		case <-t.C:
			if pending {
				continue // the last renewal has not come back
			}
			pending = true
			go func(sent time.Time) {
				held, err := l.Leases.Lease(ctx, l.Key, l.Owner, l.TTL)
				renewed <- renewal{sent, held, err}
			}(time.Now())
		}
	}
}

// leaseErrors reports a run of failed lease calls once, when it starts,
// and once when a call succeeds again: a store that is down fails every
// try, four a TTL on each replica, and a line for each would bury the
// one that says why no connection runs. Only Run's goroutine uses it.
type leaseErrors struct {
	onError   func(error)
	onRecover func(failed int, down time.Duration)
	failed    int
	since     time.Time // when the first of the failed calls came back
}

// saw takes the outcome of one lease call made under ctx. A call that
// failed because ctx ended (shutting down, the lead ending) says nothing
// of the store.
func (e *leaseErrors) saw(ctx context.Context, err error) {
	switch {
	case err != nil && ctx.Err() != nil:
	case err != nil:
		if e.failed == 0 {
			e.since = time.Now()
			if e.onError != nil {
				e.onError(err)
			}
		}
		e.failed++
	case e.failed > 0:
		if e.onRecover != nil {
			e.onRecover(e.failed, time.Since(e.since))
		}
		e.failed = 0
	}
}

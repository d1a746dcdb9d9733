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
	defer func() {
		rctx, cancel := core.Settle(ctx)
		defer cancel()
		_ = kv.Release(rctx, key, owner)
	}()
	for ctx.Err() == nil {
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
		keep(lctx, kv, key, owner, ttl, lost)
		lost()
		<-done
		onChange(false)
	}
}

// keep renews the lease every ttl/4 until ctx ends or the lease is lost,
// and then calls lost. A renewal that errs is tried again; only when no
// renewal has been confirmed for a whole ttl is the lease taken as lost,
// since by then another replica may hold it.
func keep(ctx context.Context, kv Leases, key, owner string, ttl time.Duration, lost func()) {
	defer lost()
	confirmed := time.Now()
	t := time.NewTicker(ttl / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		held, err := kv.Lease(ctx, key, owner, ttl)
		switch {
		case err == nil && !held:
			return
		case err == nil:
			confirmed = time.Now()
		case time.Since(confirmed) >= ttl:
			return
		}
	}
}

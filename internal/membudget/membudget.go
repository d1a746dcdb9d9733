// Package membudget is a core.Budget kept in one process's memory: the
// embedded store's budgets (its process is everyone who spends from
// them), and the count a door keeps of its own when it is given no
// store's. Both use this one, as an adapter may not import a store.
package membudget

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/askbridge/askbridge/core"
)

// Budget keeps one token bucket per key and limit.
type Budget struct {
	mu sync.Mutex
	m  map[key]*rate.Limiter
	// spends counts Spend calls since the last sweep.
	spends int
	now    func() time.Time
}

type key struct {
	key   string
	limit core.Limit
}

var (
	_ core.Budget   = (*Budget)(nil)
	_ core.Refunder = (*Budget)(nil)
)

// New returns an empty budget on the clock now (nil: the wall clock).
func New(now func() time.Time) *Budget {
	if now == nil {
		now = time.Now
	}
	return &Budget{m: map[key]*rate.Limiter{}, now: now}
}

// SweepEvery is how many spends pass between sweeps of full budgets.
const SweepEvery = 1024

// sweep drops the budgets that are full again at now: a full limiter is
// the same as a new one, so dropping it changes nothing but memory. Keys
// can be many (sign-ins and wrong tokens are counted per client
// address), and without this every address ever seen would stay.
func (b *Budget) sweep(now time.Time) {
	for k, lim := range b.m {
		if lim.TokensAt(now) >= float64(lim.Burst()) {
			delete(b.m, k)
		}
	}
}

// Spend takes one from key's budget if it has one now; otherwise it takes
// nothing and says how long until it will.
func (b *Budget) Spend(_ context.Context, k string, l core.Limit) (time.Duration, error) {
	if err := l.Check("spend", k); err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if b.spends++; b.spends >= SweepEvery {
		b.spends = 0
		b.sweep(now)
	}
	bk := key{k, l}
	lim := b.m[bk]
	if lim == nil {
		lim = rate.NewLimiter(rate.Limit(float64(l.Rate)/l.Per.Seconds()), max(l.Burst, 1))
		b.m[bk] = lim
	}
	res := lim.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, nil
	}
	return 0, nil
}

// Until reports how long until key's budget has one, taking nothing.
func (b *Budget) Until(_ context.Context, k string, l core.Limit) (time.Duration, error) {
	if err := l.Check("until", k); err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	lim := b.m[key{k, l}]
	if lim == nil {
		return 0, nil // never spent, or full again and swept
	}
	short := 1 - lim.TokensAt(b.now())
	if short <= 0 {
		return 0, nil
	}
	return time.Duration(short / float64(lim.Limit()) * float64(time.Second)), nil
}

// Refund gives one send back to key's budget, up to its burst: a budget
// full again is dropped, as a sweep would drop it, and one never spent
// (or swept) is full already.
func (b *Budget) Refund(_ context.Context, k string, l core.Limit) error {
	if err := l.Check("refund", k); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	bk := key{k, l}
	lim := b.m[bk]
	if lim == nil {
		return nil
	}
	now := b.now()
	tokens := lim.TokensAt(now) + 1
	if tokens >= float64(lim.Burst()) {
		delete(b.m, bk)
		return nil
	}
	b.m[bk] = holding(lim, tokens, now)
	return nil
}

// holding is a limiter like lim that holds tokens at now. A limiter
// takes no tokens back but through a reservation it cancels, so this one
// is new: emptied whole at the time from which it comes round to tokens
// by now.
func holding(lim *rate.Limiter, tokens float64, now time.Time) *rate.Limiter {
	fresh := rate.NewLimiter(lim.Limit(), lim.Burst())
	fresh.ReserveN(now.Add(-time.Duration(tokens/float64(lim.Limit())*float64(time.Second))), lim.Burst())
	return fresh
}

// Len is how many budgets are kept: those spent and not yet full again
// at the last sweep.
func (b *Budget) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}

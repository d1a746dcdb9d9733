package bolt

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/askbridge/askbridge/core"
)

// budgets keeps send budgets in memory: the embedded store serves one
// process, so the process is everyone who spends from them.
type budgets struct {
	mu sync.Mutex
	m  map[budgetKey]*rate.Limiter
	// spends counts Spend calls since the last sweep (see sweep).
	spends int
}

// sweepEvery is how many spends pass between sweeps of full budgets.
const sweepEvery = 1024

// sweep drops the budgets that are full again at now: a full limiter is
// the same as a new one, so dropping it changes nothing but memory. Keys
// can be many (the console budgets sign-ins per client address), and
// without this every address ever seen would stay.
func (b *budgets) sweep(now time.Time) {
	for k, lim := range b.m {
		if lim.TokensAt(now) >= float64(lim.Burst()) {
			delete(b.m, k)
		}
	}
}

type budgetKey struct {
	key   string
	limit core.Limit
}

var _ core.Budget = (*Store)(nil)

// Spend takes one send from key's budget if it has one now; otherwise it
// takes nothing and says how long until it will.
func (s *Store) Spend(ctx context.Context, key string, l core.Limit) (time.Duration, error) {
	if err := l.Check("spend", key); err != nil {
		return 0, err
	}
	b := &s.budgets
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = make(map[budgetKey]*rate.Limiter)
	}
	now := s.now()
	if b.spends++; b.spends >= sweepEvery {
		b.spends = 0
		b.sweep(now)
	}
	k := budgetKey{key, l}
	lim := b.m[k]
	if lim == nil {
		lim = rate.NewLimiter(rate.Limit(float64(l.Rate)/l.Per.Seconds()), max(l.Burst, 1))
		b.m[k] = lim
	}
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, nil
	}
	return 0, nil
}

// Until reports how long until key's budget has a send, taking nothing.
func (s *Store) Until(ctx context.Context, key string, l core.Limit) (time.Duration, error) {
	if err := l.Check("until", key); err != nil {
		return 0, err
	}
	b := &s.budgets
	b.mu.Lock()
	defer b.mu.Unlock()
	lim := b.m[budgetKey{key, l}]
	if lim == nil {
		return 0, nil // never spent, or full again and swept
	}
	short := 1 - lim.TokensAt(s.now())
	if short <= 0 {
		return 0, nil
	}
	return time.Duration(short / float64(lim.Limit()) * float64(time.Second)), nil
}

package guard

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/askbridge/askbridge/core"
)

// Memory is a core.Budget kept in this process, for a door given no
// store's: its count is this process's alone, not shared by replicas. It
// keeps budgets as the embedded store does (store/bolt's budget.go),
// whose own an adapter may not import (DESIGN.md); core, which both may,
// keeps none in memory.
type Memory struct {
	mu sync.Mutex
	m  map[memoryKey]*rate.Limiter
	// spends counts Spend calls since the last sweep.
	spends int
	now    func() time.Time
}

type memoryKey struct {
	key   string
	limit core.Limit
}

// NewMemory returns an empty budget in memory, on the wall clock.
func NewMemory() *Memory { return &Memory{m: map[memoryKey]*rate.Limiter{}, now: time.Now} }

var _ core.Budget = (*Memory)(nil)

// sweepEvery is how many spends pass between sweeps of full budgets: a
// full budget is the same as none, and every address ever seen would
// otherwise stay.
const sweepEvery = 1024

// Spend takes one from key's budget if it has one now; otherwise it takes
// nothing and says how long until it will.
func (b *Memory) Spend(_ context.Context, key string, l core.Limit) (time.Duration, error) {
	if err := l.Check("spend", key); err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if b.spends++; b.spends >= sweepEvery {
		b.spends = 0
		for k, lim := range b.m {
			if lim.TokensAt(now) >= float64(lim.Burst()) {
				delete(b.m, k)
			}
		}
	}
	k := memoryKey{key, l}
	lim := b.m[k]
	if lim == nil {
		lim = rate.NewLimiter(rate.Limit(float64(l.Rate)/l.Per.Seconds()), max(l.Burst, 1))
		b.m[k] = lim
	}
	res := lim.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, nil
	}
	return 0, nil
}

// Until reports how long until key's budget has one, taking nothing.
func (b *Memory) Until(_ context.Context, key string, l core.Limit) (time.Duration, error) {
	if err := l.Check("until", key); err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	lim := b.m[memoryKey{key, l}]
	if lim == nil {
		return 0, nil
	}
	short := 1 - lim.TokensAt(b.now())
	if short <= 0 {
		return 0, nil
	}
	return time.Duration(short / float64(lim.Limit()) * float64(time.Second)), nil
}

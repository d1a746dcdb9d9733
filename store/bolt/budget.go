package bolt

import (
	"context"
	"time"

	"github.com/askbridge/askbridge/core"
)

// The embedded store keeps send budgets in memory (membudget): it serves
// one process, so the process is everyone who spends from them.

var (
	_ core.Budget   = (*Store)(nil)
	_ core.Refunder = (*Store)(nil)
)

// Spend takes one send from key's budget if it has one now; otherwise it
// takes nothing and says how long until it will.
func (s *Store) Spend(ctx context.Context, key string, l core.Limit) (time.Duration, error) {
	return s.budgets.Spend(ctx, key, l)
}

// Until reports how long until key's budget has a send, taking nothing.
func (s *Store) Until(ctx context.Context, key string, l core.Limit) (time.Duration, error) {
	return s.budgets.Until(ctx, key, l)
}

// Refund gives one send back to key's budget, up to its burst.
func (s *Store) Refund(ctx context.Context, key string, l core.Limit) error {
	return s.budgets.Refund(ctx, key, l)
}

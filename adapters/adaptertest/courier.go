package adaptertest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/askbridge/askbridge/core"
)

// Outcome names how the outbox reads a courier's error: "sent", "retry
// after", "permanent", "not sent", or "unknown" (it may have posted, so
// a post's retry is flagged as a possible repeat).
func Outcome(err error) string {
	var ra *core.RetryAfter
	var perm *core.Permanent
	var ns *core.NotSent
	switch {
	case err == nil:
		return "sent"
	case errors.As(err, &ra):
		return "retry after"
	case errors.As(err, &perm):
		return "permanent"
	case errors.As(err, &ns):
		return "not sent"
	}
	return "unknown"
}

// CountingBudget is a shared send budget (core.Budget) that always has a
// send, and counts what is spent from each key. Its zero value is ready.
type CountingBudget struct {
	mu    sync.Mutex
	spent map[string]int
}

var _ core.Budget = (*CountingBudget)(nil)

// Spend counts one send from key.
func (b *CountingBudget) Spend(_ context.Context, key string, _ core.Limit) (time.Duration, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.spent == nil {
		b.spent = map[string]int{}
	}
	b.spent[key]++
	return 0, nil
}

// Until says every key has a send now.
func (b *CountingBudget) Until(context.Context, string, core.Limit) (time.Duration, error) {
	return 0, nil
}

// Count is how many sends were spent from key.
func (b *CountingBudget) Count(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent[key]
}

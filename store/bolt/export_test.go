package bolt

import (
	"context"

	"github.com/askbridge/askbridge/core"
)

// Resolve applies t to the question as stored, as the chokepoint would
// (core.Apply: Next, then Commit, again if it went stale), for the
// black-box tests that drive the store with transitions of their own.
func (s *Store) Resolve(ctx context.Context, t core.Transition) (*core.Question, error) {
	return core.Apply(ctx, s, t)
}

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

// Commits is how many write transactions the store has committed, each
// one fsync of the file unless it was opened with NoSync.
func (s *Store) Commits() int64 { return s.commits.committed.Load() }

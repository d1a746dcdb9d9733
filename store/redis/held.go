package redis

import (
	"context"

	"github.com/askbridge/askbridge/core"
)

// DropHeld takes a held card update back in one script (drop_held.lua),
// unless a claim has put it on the stream or the question has changed
// since it was held.
func (s *Store) DropHeld(ctx context.Context, h core.Held) (bool, error) {
	const op = "redis drop held"
	if !h.Surface.IsChat() {
		return false, core.Errorf(core.CodeInvalid, op, "only chat surfaces have outboxes, not %q", h.Surface)
	}
	shard, ok := s.shardOf(h.QuestionID)
	if !ok {
		return false, nil // no such question, so nothing held for it
	}
	keys := []string{s.k.later(shard, h.Surface), s.k.held(shard, h.Surface), s.k.question(h.QuestionID)}
	r, err := s.run(ctx, dropHeldScript, keys, h.Key)
	if err != nil {
		return false, core.Internal(op, err)
	}
	return r.n == 1, nil
}

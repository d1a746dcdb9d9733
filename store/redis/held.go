package redis

import (
	"context"

	"github.com/askbridge/askbridge/core"
)

// heldCard is the number (from 1, as the hash numbers cards) of the card
// t.Hold names, found in the question as the caller read it: cards are
// only ever added, so a card's number never changes. 0 when there is no
// hold, no copy to look in, or no such card (nothing is held then, and
// every card's update is enqueued as usual).
func heldCard(t core.Transition) int {
	if t.Hold == nil || t.Read == nil || !t.Hold.Surface.IsChat() {
		return 0
	}
	for i, m := range t.Read.Messages {
		if m.Surface == t.Hold.Surface && m.ID == t.Hold.MessageID {
			return i + 1
		}
	}
	return 0
}

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

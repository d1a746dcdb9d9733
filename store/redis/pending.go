package redis

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/askbridge/askbridge/core"
)

// A delivery with a delay (core.Delivery.Delay) waits in its surface's
// zset of retries, as member "h|<key>", with what goes on the stream in
// the surface's held hash under its key (common.lua's hold), until a
// claim puts it on the stream once due (claim.lua) or Cancel takes it back
// (cancel.lua). It reuses the retries' machinery: a claim already moves
// what fell due there onto the stream. Card updates keep the format held
// card updates had before delays were generic ("<ver> <time> <card>"), so
// entries written then, and replicas of that version during an upgrade,
// read them unchanged; a delivery kept whole ("d <json>") is new.

// Cancel takes a delayed delivery back in one script (cancel.lua), unless
// a claim has put it on the stream or, with p.IfVersion, the question has
// moved on.
func (s *Store) Cancel(ctx context.Context, p core.Pending) (bool, error) {
	const op = "redis cancel"
	if !p.Surface.HasOutbox() {
		return false, core.Errorf(core.CodeInvalid, op, "only %s have outboxes, not %q", core.SurfaceNames(core.OutboxSurfaces), p.Surface)
	}
	shard := s.deliveryShard(core.Delivery{QuestionID: p.QuestionID, Key: p.Key})
	keys := []string{s.k.later(shard, p.Surface), s.k.held(shard, p.Surface)}
	var ver string
	if p.IfVersion != nil {
		if _, ok := s.shardOf(p.QuestionID); !ok {
			return false, nil // no such question, so it cannot be at the version
		}
		keys, ver = append(keys, s.k.question(p.QuestionID)), strconv.FormatInt(*p.IfVersion, 10)
	}
	r, err := s.run(ctx, cancelScript, keys, p.Key, ver)
	if err != nil {
		return false, core.Internal(op, err)
	}
	return r.n == 1, nil
}

// enqueueLater holds the delayed deliveries of one Enqueue (later.lua),
// one call per shard and surface.
func (s *Store) enqueueLater(ctx context.Context, out []core.Delivery) error {
	type box struct {
		shard   int
		surface core.Surface
	}
	byBox := make(map[box][]any)
	for _, d := range out {
		v, err := wholeValue(d)
		if err != nil {
			return err
		}
		b := box{s.deliveryShard(d), d.Surface}
		byBox[b] = append(byBox[b], d.Key, d.Delay.Milliseconds(), v)
	}
	for b, args := range byBox {
		keys := []string{s.k.later(b.shard, b.surface), s.k.held(b.shard, b.surface)}
		if _, err := s.run(ctx, laterScript, keys, append([]any{s.clock()}, args...)...); err != nil {
			return err
		}
	}
	return nil
}

// wholeValue is what the held hash keeps of a delayed delivery kept whole:
// "d " and its JSON, as Enqueue puts it on the stream.
func wholeValue(d core.Delivery) ([]byte, error) {
	b, err := json.Marshal(&d)
	if err != nil {
		return nil, err
	}
	return append([]byte("d "), b...), nil
}

// delayed counts the deliveries of ds with a delay.
func delayed(ds []core.Delivery) int {
	n := 0
	for i := range ds {
		if ds[i].Delay > 0 {
			n++
		}
	}
	return n
}

// appendHeldKeys appends to resolve.lua's KEYS the zset of retries and
// held hash of each delayed update's surface, in order.
func (s *Store) appendHeldKeys(cmd []any, shard int, ds []core.Delivery) []any {
	for i := range ds {
		if ds[i].Delay > 0 {
			cmd = append(cmd, s.k.later(shard, ds[i].Surface), s.k.held(shard, ds[i].Surface))
		}
	}
	return cmd
}

// appendHeldTail appends resolve.lua's ARGV tail for c's delayed updates:
// the store's clock, then per update the number among KEYS of its zset of
// retries (first is that of the first), the value to hold, its key and
// its delay in ms. now is c.Now as JSON.
func (s *Store) appendHeldTail(cmd []any, c core.Change, now []byte, first int) ([]any, error) {
	cmd = append(cmd, s.clock())
	k := first
	for _, d := range c.Updates {
		if d.Delay <= 0 {
			continue
		}
		var v []byte
		var err error
		if isWebhook(d) {
			v, err = wholeValue(d)
		} else {
			var card []byte
			if card, err = updateValue(c.Question.ID, d); err == nil {
				v = strconv.AppendInt(nil, c.Question.Version, 10)
				v = append(append(append(append(v, ' '), now...), ' '), card...)
			}
		}
		if err != nil {
			return nil, err
		}
		cmd = append(cmd, k, v, d.Key, d.Delay.Milliseconds())
		k += 2
	}
	return cmd, nil
}

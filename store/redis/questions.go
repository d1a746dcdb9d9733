package redis

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/askbridge/askbridge/core"
)

// Create stores q as open, its asked event and its deliveries in one
// script.
func (s *Store) Create(ctx context.Context, q *core.Question, asked core.Event, out []core.Delivery) error {
	const op = "redis create"
	shard, ok := s.shardOf(q.ID)
	if !ok {
		return core.Errorf(core.CodeInvalid, op, "question id %q names no shard of this store", q.ID)
	}
	docJSON, err := encodeDocument(q)
	if err != nil {
		return core.Internal(op, err)
	}
	ev, err := s.renderEvent(asked, shard)
	if err != nil {
		return core.Internal(op, err)
	}
	deadline := ""
	if !q.Deadline.IsZero() {
		deadline = msString(q.Deadline)
	}
	args := ev.args([]any{
		shard, s.clockArg(), surfaceList,
		string(q.ID), q.Run().Key(), docJSON, openMember(q), msString(q.CreatedAt), deadline,
		q.Renotified,
	})
	args = append(args, idemKey(q))
	if args, err = appendDeliveries(op, args, out); err != nil {
		return err
	}
	keys := append([]string{
		s.k.question(q.ID), s.k.events(shard), s.k.seq(shard),
		s.k.open(shard), s.k.created(shard), s.k.deadline(shard), s.k.runOpen(shard), s.k.runs(shard),
		s.k.idempotency(shard), s.k.document(q.ID),
	}, s.k.outboxes(shard)...)
	r, err := s.run(ctx, createScript, keys, args...)
	if err != nil {
		return core.Internal(op, err)
	}
	if r.code == codeDuplicate && len(r.list) == 1 {
		// The key was taken in the script, atomically; reading the first
		// question afterwards is only to hand it back.
		first, err := s.Get(ctx, core.QuestionID(r.list[0]))
		if err != nil {
			return core.Internal(op, fmt.Errorf("the question %s holding the idempotency key: %w", r.list[0], err))
		}
		return &core.DuplicateError{Question: first}
	}
	_, err = s.outcome(op, q.ID, r)
	return err
}

// idemKey is the idempotency key Create passes its script, "" for none.
func idemKey(q *core.Question) string {
	if q.Idempotency == nil {
		return ""
	}
	return q.Idempotency.Key
}

// Get reads one question.
func (s *Store) Get(ctx context.Context, id core.QuestionID) (*core.Question, error) {
	const op = "redis get"
	if _, ok := s.shardOf(id); !ok {
		return nil, core.ErrNotFound
	}
	if q, ok := s.cache.settledCopy(id); ok {
		return q, nil
	}
	t := s.cache.readStarts(id)
	qs, err := s.load(ctx, []core.QuestionID{id})
	if err != nil {
		s.cache.readEnds(id, t, nil)
		return nil, core.Internal(op, err)
	}
	if len(qs) == 0 {
		s.cache.readEnds(id, t, nil)
		return nil, core.ErrNotFound
	}
	s.cache.readEnds(id, t, qs[0])
	return qs[0], nil
}

// ReadToChange is Get, except that for a question a local watcher waits
// on it may answer from the fresh copy the watcher's last read left,
// without a round trip (readCache).
func (s *Store) ReadToChange(ctx context.Context, id core.QuestionID) (*core.Question, error) {
	if _, ok := s.shardOf(id); ok {
		if q, ok := s.cache.freshCopy(id); ok {
			return q, nil
		}
	}
	return s.Get(ctx, id)
}

// appendDeliveries adds deliveries to a script's ARGV as surface, JSON
// pairs, preceded by their count.
func appendDeliveries(op string, args []any, out []core.Delivery) ([]any, error) {
	args = append(args, len(out))
	for _, d := range out {
		if !d.Surface.HasOutbox() {
			return nil, core.Errorf(core.CodeInvalid, op, "deliveries go to %s, not %q", core.SurfaceNames(core.OutboxSurfaces), d.Surface)
		}
		b, err := json.Marshal(&d)
		if err != nil {
			return nil, core.Internal(op, err)
		}
		args = append(args, string(d.Surface), b)
	}
	return args, nil
}

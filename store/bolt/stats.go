package bolt

import (
	"context"

	"github.com/askbridge/askbridge/core"
	"go.etcd.io/bbolt"
)

var _ core.OutboxStats = (*Store)(nil)

// OutboxStat reports how many deliveries surface's outbox holds and when
// the oldest was enqueued. Ack deletes a delivery, so what is in the
// bucket is what is still to be delivered, in enqueue order.
func (s *Store) OutboxStat(ctx context.Context, surface core.Surface) (core.OutboxStat, error) {
	const op = "outbox stat"
	var st core.OutboxStat
	if !surface.HasOutbox() {
		return st, core.Errorf(core.CodeInvalid, op, "only %s have outboxes, not %q", core.SurfaceNames(core.OutboxSurfaces), surface)
	}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	err := s.view(op, func(tx *bbolt.Tx) error {
		ob := tx.Bucket(outboxBucket(surface))
		if ob == nil {
			return nil
		}
		c := ob.Cursor()
		k, v := c.First()
		if k == nil {
			return nil
		}
		rec, err := decodeOutbox(v)
		if err != nil {
			return err
		}
		st.Oldest = rec.Delivery.CreatedAt
		for ; k != nil; k, _ = c.Next() {
			st.Depth++
		}
		return nil
	})
	return st, err
}

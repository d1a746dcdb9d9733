package redis

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/core"
)

var _ core.OutboxStats = (*Store)(nil)

// OutboxStat reports how many deliveries surface's outbox holds over all
// shards and when the oldest was enqueued. Ack deletes an entry from its
// stream, so a stream's length is what is still to be delivered, and its
// first entry's id carries its enqueue time in milliseconds. Deliveries
// waiting to fall due (retries, delayed deliveries) count too, as the
// embedded store counts them; Oldest is of those on the streams.
func (s *Store) OutboxStat(ctx context.Context, surface core.Surface) (core.OutboxStat, error) {
	var st core.OutboxStat
	if !surface.HasOutbox() {
		return st, core.Errorf(core.CodeInvalid, "outbox stat", "only %s have outboxes, not %q", core.SurfaceNames(core.OutboxSurfaces), surface)
	}
	for shard := 0; shard < s.shards; shard++ {
		later, err := s.client.ZCard(ctx, s.k.later(shard, surface)).Result()
		if err != nil {
			return st, core.Internal("outbox stat", err)
		}
		st.Depth += int(later)
		stream := s.k.outbox(shard, surface)
		n, err := s.client.XLen(ctx, stream).Result()
		if err != nil {
			return st, core.Internal("outbox stat", err)
		}
		if n == 0 {
			continue
		}
		st.Depth += int(n)
		first, err := s.client.XRangeN(ctx, stream, "-", "+", 1).Result()
		if err != nil {
			return st, core.Internal("outbox stat", err)
		}
		if len(first) == 0 {
			continue // acked between the two calls
		}
		msText, _, _ := strings.Cut(first[0].ID, "-")
		ms, err := strconv.ParseInt(msText, 10, 64)
		if err != nil {
			return st, core.Internal("outbox stat", err)
		}
		if at := time.UnixMilli(ms).UTC(); st.Oldest.IsZero() || at.Before(st.Oldest) {
			st.Oldest = at
		}
	}
	return st, nil
}

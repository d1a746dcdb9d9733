package redis

import (
	"context"
	"fmt"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
)

// purgeBatch bounds the questions (and loose events) one purge script
// drops, so no single script holds the server long.
const purgeBatch = 500

// Purge drops up to limit (all, for limit <= 0) questions closed before
// cutoff, with their events, shard by shard, in batches. Candidates are
// read first and checked again inside the script, so a purge never drops
// what it should not.
func (s *Store) Purge(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	const op = "redis purge"
	total := 0
	if err := s.catchUpClosed(ctx); err != nil {
		return 0, core.Internal(op, err)
	}
	for shard := range s.shards {
		for {
			want := purgeBatch
			if limit > 0 {
				if total >= limit {
					return total, nil
				}
				want = min(want, limit-total)
			}
			ids, err := s.client.ZRangeArgs(ctx, goredis.ZRangeArgs{
				Key: s.k.closed(shard), Start: "-inf", Stop: "(" + msString(cutoff), ByScore: true, Count: int64(want),
			}).Result()
			if err != nil {
				return total, core.Internal(op, err)
			}
			r, err := s.purgeBatch(ctx, shard, cutoff, questionIDs(ids))
			// What is kept of a watched candidate goes whether or not it
			// was purged (a read costs less than a copy of a question
			// that is gone).
			for _, id := range questionIDs(ids) {
				s.cache.wrote(id)
			}
			if err != nil {
				return total, core.Internal(op, err)
			}
			total += int(r.n)
			loose := 0
			if len(r.list) > 0 {
				loose, _ = strconv.Atoi(r.list[0])
			}
			// Done with the shard when a batch came up short; a batch
			// whose candidates were all taken meanwhile is done too.
			if (len(ids) < want || r.n == 0) && loose < purgeBatch {
				break
			}
		}
		if err := s.purgeRuns(ctx, shard, cutoff); err != nil {
			return total, core.Internal(op, err)
		}
	}
	return total, nil
}

// purgeAttempts bounds how often one batch is planned again because its
// runs changed between the plan and the purge (an event came meanwhile).
const purgeAttempts = 3

// purgeBatch purges one batch of candidates of shard (purge.lua): it plans
// (the runs their events make), renders the checkpoint with those runs
// under the keyed digest, and purges if the runs are still the same.
func (s *Store) purgeBatch(ctx context.Context, shard int, cutoff time.Time, ids []core.QuestionID) (reply, error) {
	// One mark for the batch: only a run that purges leaves it, and
	// after one has, the batch is done.
	keys := []string{s.k.closed(shard), s.k.created(shard), s.k.events(shard), s.k.loose(shard), s.k.idempotency(shard),
		s.k.deadline(shard), s.k.runOpen(shard), s.k.seq(shard), s.k.open(shard), s.k.purged(shard, s.attempt())}
	var mine []any
	for _, id := range ids {
		if sh, ok := s.shardOf(id); !ok || sh != shard {
			continue
		}
		keys = append(keys, s.k.question(id), s.k.document(id), s.k.resolution(id))
		mine = append(mine, string(id))
	}
	now := time.Now()
	if s.now != nil {
		now = s.now()
	}
	head := []any{shard, s.clockArg(), "", msString(cutoff), purgeBatch}
	plan := append(append(head[:len(head):len(head)], "", "", "", msString(now), ""), mine...)
	r, err := s.run(ctx, purgeScript, keys, plan...) // a stale purge's reply is a plan too
	for attempt := 1; ; attempt++ {
		if err != nil {
			return reply{}, err
		}
		if len(r.list) != 1 {
			return reply{}, fmt.Errorf("purge planned %d values", len(r.list))
		}
		runs := r.list[0]
		checkpoint, rerr := s.renderEvent(audit.Checkpoint(cutoff, now, runs), shard)
		if rerr != nil {
			return reply{}, rerr
		}
		args := append(append(checkpoint.args(head[:len(head):len(head)]), msString(now), runs), mine...)
		if r, err = s.run(ctx, purgeScript, keys, args...); err != nil || r.code != codeStale {
			return r, err
		}
		if attempt == purgeAttempts {
			return reply{}, fmt.Errorf("the events to purge changed under %d attempts", purgeAttempts)
		}
	}
}

// purgeRuns drops the markers of runs that ended before cutoff (law 9):
// after the retention period an ask into such a run is no longer refused.
// A marker never changes once set (the first end wins), so what the scan
// read is what is dropped.
func (s *Store) purgeRuns(ctx context.Context, shard int, cutoff time.Time) error {
	key := s.k.runs(shard)
	end := cutoff.UnixMilli()
	var cursor uint64
	for {
		kvs, next, err := s.client.HScan(ctx, key, cursor, "", 500).Result()
		if err != nil {
			return err
		}
		var old []string
		for i := 0; i+1 < len(kvs); i += 2 {
			if ms, err := strconv.ParseInt(kvs[i+1], 10, 64); err == nil && ms < end {
				old = append(old, kvs[i])
			}
		}
		if len(old) > 0 {
			if err := s.client.HDel(ctx, key, old...).Err(); err != nil {
				return err
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

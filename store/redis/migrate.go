package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	goredis "github.com/redis/go-redis/v9"
)

// layoutVersion is the layout of the records this version writes
// (record.go, keys.go). Each shard keeps the layout its records are in
// (keys.layout); a shard without one is of layout 0 or 1, written before
// the layout was kept. The layouts:
//
//	0  the document and resolution in the question's hash, every counter
//	   stored, event ids in a list key of their own, the open index
//	   member whole in "om", the event counter n alone
//	1  the document in a key of its own and the resolution after it
//	   (behind 0x1e), event ids in "ev", om less its ":<id>" (records of
//	   layout 0 were still read as they were)
//	2  the resolution in a key of its own; closes marked on their first
//	   event and left out of the open and closed indexes, which their
//	   readers catch up; the event counter "<n> <hash>"
const layoutVersion = 2

// migrateBatch is how many questions one migrate script rewrites.
const migrateBatch = 200

// migrate brings every shard of an earlier layout to layoutVersion, once,
// before the store serves: the readers of earlier layouts are gone, so a
// record of one would not read. Every question is rewritten by
// migrate.lua, in batches taken from the created index (which holds every
// question until it is purged), then migrate_shard.lua sets the shard's
// layout. Each step is atomic and does nothing the second time, so two
// replicas opening at once, or one opening again after it was killed
// halfway, leave the same records; the layout is set only once every
// question of the shard is rewritten.
//
// Every replica must run this version before it takes traffic: a replica
// of an earlier version still running would write records of its own
// layout, which this one no longer reads (README, "Upgrading").
func (s *Store) migrate(ctx context.Context) error {
	for shard := range s.shards {
		v, err := s.client.Get(ctx, s.k.layout(shard)).Result()
		if err != nil && !errors.Is(err, goredis.Nil) {
			return err
		}
		if n, _ := strconv.Atoi(v); n > layoutVersion {
			return fmt.Errorf("shard %d is of layout %d, newer than this version's %d", shard, n, layoutVersion)
		} else if n == layoutVersion {
			continue
		}
		if err := s.migrateShard(ctx, shard); err != nil {
			return fmt.Errorf("migrate shard %d to layout %d: %w", shard, layoutVersion, err)
		}
	}
	return nil
}

func (s *Store) migrateShard(ctx context.Context, shard int) error {
	for start := int64(0); ; start += migrateBatch {
		ids, err := s.client.ZRange(ctx, s.k.created(shard), start, start+migrateBatch-1).Result()
		if err != nil {
			return err
		}
		keys := make([]string, 0, 4*len(ids))
		args := []any{shard, s.clockArg(), ""}
		for _, id := range questionIDs(ids) {
			if sh, ok := s.shardOf(id); !ok || sh != shard {
				continue
			}
			keys = append(keys, s.k.question(id), s.k.document(id), s.k.resolution(id), s.k.questionEvents(id))
			args = append(args, string(id))
		}
		if len(keys) > 0 {
			if _, err := s.run(ctx, migrateScript, keys, args...); err != nil {
				return err
			}
		}
		if len(ids) < migrateBatch {
			break
		}
	}
	sk := s.shardKeys(shard)
	_, err := s.run(ctx, migrateShardScript, []string{sk.seq, sk.events, s.k.closedCursor(shard), s.k.layout(shard)}, layoutVersion)
	return err
}

package redis

import (
	"context"
	"errors"
	"strconv"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
)

// Log is a store's event log opened only to be read, as `askbridge audit
// verify` reads it. Opening a Store writes: it records the shard count of
// a Redis that has none, migrates shards of an earlier layout, makes and
// prunes the outbox consumer groups, and subscribes. A check must do none
// of that: on a wrong database it would make a store there and report its
// empty log as holding, and under replicas of an earlier version still
// running it would migrate their records away from them (README,
// "Upgrading the Redis layout"). A Log has no method that writes, and
// opens only a store this version reads as it is.
type Log struct {
	s *Store
}

// OpenLog dials d and opens the event log of the store kept there under
// opts.Prefix with opts.Shards shards (of opts, only Prefix, Shards and
// AuditKey count). It writes nothing; it refuses a Redis that holds no
// store (no shard count), a store of another shard count, and a shard
// whose layout is not the one this version reads, which a Store would
// migrate. The Log owns the client and closes it on Close.
func OpenLog(ctx context.Context, d Dial, opts Options) (*Log, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	client, err := d.Client()
	if err != nil {
		return nil, err
	}
	s := &Store{client: client, k: keys{prefix: opts.Prefix}, shards: opts.Shards, audit: opts.AuditKey}
	if err := s.checkReadable(ctx); err != nil {
		_ = client.Close()
		return nil, err
	}
	return &Log{s: s}, nil
}

// checkReadable is checkShards and migrate's check, reading only: the
// store must exist, with this shard count, every shard in layoutVersion.
func (s *Store) checkReadable(ctx context.Context) error {
	const op = "redis open log"
	key, want := s.k.shardCount(), strconv.Itoa(s.shards)
	got, err := s.client.Get(ctx, key).Result()
	if errors.Is(err, goredis.Nil) {
		return core.Errorf(core.CodeNotFound, op, "this Redis holds no askbridge store (it has no %s key): is this the database and key prefix askbridge serve uses?", key)
	}
	if err != nil {
		return core.Internal(op, err)
	}
	if got != want {
		return core.Errorf(core.CodeInvalid, op, "this Redis holds a store of %s shards, and it is opened with %d (policies.shards): a store keeps the shard count it was made with", got, s.shards)
	}
	for shard := range s.shards {
		v, err := s.client.Get(ctx, s.k.layout(shard)).Result()
		if errors.Is(err, goredis.Nil) {
			return core.Errorf(core.CodeInvalid, op, "shard %d keeps no layout: its records are of layout 0 or 1, which an earlier version wrote and this one reads only once askbridge serve of this version has migrated them (README, \"Upgrading the Redis layout\"); check an export taken from a running replica instead (GET /v1/audit/export)", shard)
		}
		if err != nil {
			return core.Internal(op, err)
		}
		if n, err := strconv.Atoi(v); err != nil || n != layoutVersion {
			return core.Errorf(core.CodeInvalid, op, "shard %d is of layout %q; this version reads layout %d", shard, v, layoutVersion)
		}
	}
	return nil
}

// Events reads events as Store.Events does.
func (l *Log) Events(ctx context.Context, since int64, limit int) ([]core.Event, error) {
	return l.s.Events(ctx, since, limit)
}

// Close closes the client.
func (l *Log) Close() error {
	return l.s.client.Close()
}

package redis

import (
	"context"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
)

var _ core.Endings = (*Store)(nil)

// The journal of the runs being ended is one sorted set in shard 0, run
// -> the ms its ending began. It holds only the endings under way (core
// drops each once done), so the ticker's read of it is one small command.
//
// Each call is one command, not waited for when Durability is on: the
// journal is written before the run's end is marked (the script of
// Questions.EndRun, which is waited for) on the same primary as shard
// 0's mark, and a replica that holds the mark holds what the primary
// wrote before it.

// BeginEnding journals run as being ended from at, unless it is already.
func (s *Store) BeginEnding(ctx context.Context, run string, at time.Time) error {
	if run == "" {
		return core.Errorf(core.CodeInvalid, "begin ending", "run id is required")
	}
	err := s.client.ZAddNX(ctx, s.k.endings(), goredis.Z{Score: float64(at.UnixMilli()), Member: run}).Err()
	return core.Internal("begin ending", err)
}

// UnfinishedEndings lists the journal, oldest first, then by run (a
// sorted set's order of equal scores).
func (s *Store) UnfinishedEndings(ctx context.Context) ([]core.Ending, error) {
	zs, err := s.client.ZRangeWithScores(ctx, s.k.endings(), 0, -1).Result()
	if err != nil {
		return nil, core.Internal("unfinished endings", err)
	}
	out := make([]core.Ending, len(zs))
	for i, z := range zs {
		run, _ := z.Member.(string)
		out[i] = core.Ending{Run: run, Began: time.UnixMilli(int64(z.Score)).UTC()}
	}
	return out, nil
}

// EndingDone drops run from the journal.
func (s *Store) EndingDone(ctx context.Context, run string) error {
	return core.Internal("ending done", s.client.ZRem(ctx, s.k.endings(), run).Err())
}

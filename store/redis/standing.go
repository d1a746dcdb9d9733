package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
)

var _ core.Standings = (*Store)(nil)

// Standing approvals live in one hash, read whole: they are few (one per
// "don't ask again"), and matching an ask reads them all anyway. Each
// change that reads before it writes runs under WATCH, so two replicas
// never both take the same one.

// standingTries bounds the optimistic retries of one change.
const standingTries = 10

// PutStanding stores st, and drops those whose window had passed when st
// was granted, so the hash stays bounded (law 9). A run-long one whose
// run EndRun has marked is refused (standingTx).
func (s *Store) PutStanding(ctx context.Context, st core.Standing) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return s.standingTx(ctx, st.RunKey(), func(all map[string]core.Standing, pipe goredis.Pipeliner) {
		for id, old := range all {
			if !old.Live(st.GrantedAt) {
				pipe.HDel(ctx, s.k.standing(), id)
			}
		}
		pipe.HSet(ctx, s.k.standing(), st.ID, b)
	})
}

// ListStandings lists the standing approvals live at now, oldest first.
func (s *Store) ListStandings(ctx context.Context, now time.Time) ([]core.Standing, error) {
	all, err := s.standings(ctx, s.client)
	if err != nil {
		return nil, err
	}
	var out []core.Standing
	for _, st := range all {
		if st.Live(now) {
			out = append(out, st)
		}
	}
	core.SortStandings(out)
	return out, nil
}

// DeleteStanding drops standing approval id and returns it.
func (s *Store) DeleteStanding(ctx context.Context, id string) (core.Standing, error) {
	var got core.Standing
	found := false
	err := s.standingTx(ctx, "", func(all map[string]core.Standing, pipe goredis.Pipeliner) {
		got, found = all[id]
		if found {
			pipe.HDel(ctx, s.k.standing(), id)
		}
	})
	if err != nil {
		return core.Standing{}, err
	}
	if !found {
		return core.Standing{}, core.ErrNotFound
	}
	return got, nil
}

// EndRunStandings drops the run-long standing approvals of run and
// returns them.
func (s *Store) EndRunStandings(ctx context.Context, run string) ([]core.Standing, error) {
	var ended []core.Standing
	err := s.standingTx(ctx, "", func(all map[string]core.Standing, pipe goredis.Pipeliner) {
		ended = nil
		for id, st := range all {
			if st.RunKey() == run {
				ended = append(ended, st)
				pipe.HDel(ctx, s.k.standing(), id)
			}
		}
	})
	core.SortStandings(ended)
	return ended, err
}

// standingTx reads every standing approval under WATCH and applies the
// writes change queues, retrying when another replica changed them first.
//
// With run (a core.Run key) it also watches shard 0's ended runs and
// refuses with core.ErrStandingRunEnded, writing nothing, once run is
// marked there. EndRun marks every shard, shard 0 among them, before it
// sweeps the run's standing approvals, so a grant either commits before
// that mark, and the sweep ends it, or sees the mark (or fails its
// WATCH and tries again), and is refused. Shard 0's hash carries the
// standing hash's tag, so one transaction holds both on a cluster.
func (s *Store) standingTx(ctx context.Context, run string, change func(map[string]core.Standing, goredis.Pipeliner)) error {
	watched := []string{s.k.standing()}
	if run != "" {
		watched = append(watched, s.k.runs(0))
	}
	for range standingTries {
		err := s.client.Watch(ctx, func(tx *goredis.Tx) error {
			if run != "" {
				ended, err := tx.HExists(ctx, s.k.runs(0), run).Result()
				if err != nil {
					return err
				}
				if ended {
					return core.ErrStandingRunEnded
				}
			}
			all, err := s.standings(ctx, tx)
			if err != nil {
				return err
			}
			_, err = tx.TxPipelined(ctx, func(pipe goredis.Pipeliner) error {
				change(all, pipe)
				return nil
			})
			return err
		}, watched...)
		if !errors.Is(err, goredis.TxFailedErr) {
			return err
		}
	}
	return core.Errorf(core.CodeConflict, "standing approvals", "too many concurrent changes; try again")
}

func (s *Store) standings(ctx context.Context, c goredis.Cmdable) (map[string]core.Standing, error) {
	raw, err := c.HGetAll(ctx, s.k.standing()).Result()
	if err != nil {
		return nil, err
	}
	out := make(map[string]core.Standing, len(raw))
	for id, v := range raw {
		var st core.Standing
		if err := json.Unmarshal([]byte(v), &st); err != nil {
			return nil, fmt.Errorf("decode standing approval %s: %w", id, err)
		}
		out[id] = st
	}
	return out, nil
}

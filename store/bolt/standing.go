package bolt

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

var _ core.Standings = (*Store)(nil)

// PutStanding stores st under its id, and drops those whose window had
// passed when st was granted, so the bucket stays bounded (law 9). A
// run-long one whose run EndRun has marked is refused: the mark and this
// check are each one transaction, so a grant either lands before the
// mark, where EndRun's sweep that follows it ends it, or is refused.
func (s *Store) PutStanding(ctx context.Context, st core.Standing) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return s.update(ctx, "put standing", func(tx *bbolt.Tx) error {
		if run := st.RunKey(); run != "" && tx.Bucket(bucketRuns).Get([]byte(run)) != nil {
			return refuse(core.ErrStandingRunEnded) // before any write
		}
		bk, err := tx.CreateBucketIfNotExists(bucketStanding)
		if err != nil {
			return err
		}
		var drop [][]byte
		err = bk.ForEach(func(k, v []byte) error {
			var old core.Standing
			if json.Unmarshal(v, &old) == nil && !old.Live(st.GrantedAt) {
				drop = append(drop, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range drop {
			if err := bk.Delete(k); err != nil {
				return err
			}
		}
		return bk.Put([]byte(st.ID), b)
	})
}

// ListStandings lists the standing approvals live at now, oldest first.
// Those whose window has passed are left for the next PutStanding to
// drop; a read never writes.
func (s *Store) ListStandings(_ context.Context, now time.Time) ([]core.Standing, error) {
	var out []core.Standing
	err := s.view("list standing", func(tx *bbolt.Tx) error {
		out = nil
		bk := tx.Bucket(bucketStanding)
		if bk == nil {
			return nil
		}
		return bk.ForEach(func(k, v []byte) error {
			var st core.Standing
			if err := json.Unmarshal(v, &st); err != nil {
				return fmt.Errorf("decode standing approval %s: %w", k, err)
			}
			if st.Live(now) {
				out = append(out, st)
			}
			return nil
		})
	})
	core.SortStandings(out)
	return out, err
}

// DeleteStanding drops standing approval id and returns it.
func (s *Store) DeleteStanding(ctx context.Context, id string) (core.Standing, error) {
	var st core.Standing
	err := s.update(ctx, "delete standing", func(tx *bbolt.Tx) error {
		bk := tx.Bucket(bucketStanding)
		// Refused before any write, so the writes committed beside it
		// do not run again (refuse).
		if bk == nil {
			return refuse(core.ErrNotFound)
		}
		v := bk.Get([]byte(id))
		if v == nil {
			return refuse(core.ErrNotFound)
		}
		if err := json.Unmarshal(v, &st); err != nil {
			return fmt.Errorf("decode standing approval %s: %w", id, err)
		}
		return bk.Delete([]byte(id))
	})
	if core.ErrorCode(err) == core.CodeNotFound {
		return core.Standing{}, core.ErrNotFound
	}
	return st, err
}

// EndRunStandings drops the run-long standing approvals of run and
// returns them.
func (s *Store) EndRunStandings(ctx context.Context, run string) ([]core.Standing, error) {
	var ended []core.Standing
	err := s.update(ctx, "end run standing", func(tx *bbolt.Tx) error {
		ended = nil
		bk := tx.Bucket(bucketStanding)
		if bk == nil {
			return nil
		}
		var drop [][]byte
		err := bk.ForEach(func(k, v []byte) error {
			var st core.Standing
			if err := json.Unmarshal(v, &st); err != nil {
				return fmt.Errorf("decode standing approval %s: %w", k, err)
			}
			if st.RunKey() == run {
				ended = append(ended, st)
				drop = append(drop, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range drop {
			if err := bk.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	core.SortStandings(ended)
	return ended, err
}

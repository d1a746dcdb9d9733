package bolt

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"time"

	"go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

var _ core.Endings = (*Store)(nil)

// The journal of the runs being ended is one bucket, run -> when its
// ending began, created on first use. It holds only the endings under
// way (core drops each once done), so a listing reads it whole.

// BeginEnding journals run as being ended from at, unless it is already.
func (s *Store) BeginEnding(ctx context.Context, run string, at time.Time) error {
	if run == "" {
		return core.Errorf(core.CodeInvalid, "begin ending", "run id is required")
	}
	return s.update(ctx, "begin ending", func(tx *bbolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists(bucketEndings)
		if err != nil {
			return err
		}
		if bk.Get([]byte(run)) != nil {
			return errNoChange // the first time stays
		}
		return bk.Put([]byte(run), msKey(at))
	})
}

// UnfinishedEndings lists the runs journalled at or before before, oldest
// first, then by run, at most limit.
func (s *Store) UnfinishedEndings(_ context.Context, before time.Time, limit int) ([]string, error) {
	type ending struct {
		run   string
		began []byte
	}
	var all []ending
	cutoff := msKey(before)
	err := s.view("unfinished endings", func(tx *bbolt.Tx) error {
		all = nil
		bk := tx.Bucket(bucketEndings)
		if bk == nil {
			return nil
		}
		return bk.ForEach(func(k, v []byte) error {
			if bytes.Compare(v, cutoff) <= 0 {
				all = append(all, ending{string(k), bytes.Clone(v)})
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(all, func(a, b ending) int {
		return cmp.Or(bytes.Compare(a.began, b.began), cmp.Compare(a.run, b.run))
	})
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	runs := make([]string, len(all))
	for i, e := range all {
		runs[i] = e.run
	}
	return runs, nil
}

// EndingDone drops run from the journal.
func (s *Store) EndingDone(ctx context.Context, run string) error {
	return s.update(ctx, "ending done", func(tx *bbolt.Tx) error {
		bk := tx.Bucket(bucketEndings)
		if bk == nil || bk.Get([]byte(run)) == nil {
			return errNoChange
		}
		return bk.Delete([]byte(run))
	})
}

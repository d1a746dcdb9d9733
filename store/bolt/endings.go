package bolt

import (
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

// UnfinishedEndings lists the journal, oldest first, then by run.
func (s *Store) UnfinishedEndings(context.Context) ([]core.Ending, error) {
	var all []core.Ending
	err := s.view("unfinished endings", func(tx *bbolt.Tx) error {
		all = nil
		bk := tx.Bucket(bucketEndings)
		if bk == nil {
			return nil
		}
		return bk.ForEach(func(k, v []byte) error {
			all = append(all, core.Ending{Run: string(k), Began: timeOfKey(v)})
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(all, func(a, b core.Ending) int {
		return cmp.Or(a.Began.Compare(b.Began), cmp.Compare(a.Run, b.Run))
	})
	return all, nil
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

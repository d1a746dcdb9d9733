package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// Purge drops at most limit questions closed before cutoff with their
// events and index entries, and as many events older than cutoff that
// belong to no stored question (refusals of unknown ids).
func (s *Store) Purge(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	const op = "purge"
	var closed, loose [][]byte
	err := s.update(ctx, op, func(tx *bbolt.Tx) error {
		end := msKey(cutoff)
		closed = keysBefore(tx.Bucket(bucketClosed), end, limit)
		loose = keysBefore(tx.Bucket(bucketLooseEvents), end, limit)
		// The checkpoint goes in before anything is deleted, so it can
		// read the chain of what is.
		var seqs []uint64
		for _, k := range closed {
			seqs = append(seqs, questionEventSeqs(tx, idOfTimeKey(k))...)
		}
		for _, k := range loose {
			seqs = append(seqs, seqOfSuffix(k))
		}
		if err := s.checkpoint(tx, seqs, cutoff, s.now()); err != nil {
			return err
		}
		if err := dropClosed(tx, closed); err != nil {
			return err
		}
		if err := dropLoose(tx, loose); err != nil {
			return err
		}
		// Keys seen once expire on the store's own clock, like leases.
		onceDropped, err := purgeOnce(tx, s.now(), limit)
		if err != nil {
			return err
		}
		runsDropped, err := purgeRuns(tx, cutoff)
		if err != nil {
			return err
		}
		if len(closed) == 0 && len(loose) == 0 && onceDropped == 0 && runsDropped == 0 {
			return errNoChange
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, k := range closed {
		s.copies.purged(idOfTimeKey(k))
	}
	return len(closed), nil
}

// keysBefore are the first keys of b, at most limit (no bound if 0),
// whose time (their first 8 bytes, msKey) is before end.
func keysBefore(b *bbolt.Bucket, end []byte, limit int) [][]byte {
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.First(); k != nil && bytes.Compare(k[:8], end) < 0; k, _ = c.Next() {
		if limit > 0 && len(keys) == limit {
			break
		}
		keys = append(keys, bytes.Clone(k))
	}
	return keys
}

// dropClosed drops the questions of closed, keys of the closed index,
// and their entries there.
func dropClosed(tx *bbolt.Tx, closed [][]byte) error {
	for _, k := range closed {
		if err := dropQuestion(tx, idOfTimeKey(k)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketClosed).Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// dropLoose drops the events of loose, keys of the loose events' index,
// and their entries there.
func dropLoose(tx *bbolt.Tx, loose [][]byte) error {
	for _, k := range loose {
		if err := tx.Bucket(bucketEvents).Delete(u64(seqOfSuffix(k))); err != nil {
			return err
		}
		if err := tx.Bucket(bucketLooseEvents).Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// questionEventSeqs are the seqs of a stored question's events.
func questionEventSeqs(tx *bbolt.Tx, id core.QuestionID) []uint64 {
	prefix, err := questionEventPrefix(id)
	if err != nil {
		return nil // no stored question has such an id
	}
	var seqs []uint64
	c := tx.Bucket(bucketQuestionEvents).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		seqs = append(seqs, seqOfSuffix(k))
	}
	return seqs
}

// dropQuestion deletes a question, its events and its index entries.
func dropQuestion(tx *bbolt.Tx, id core.QuestionID) error {
	q, err := getQuestion(tx, id)
	if err == core.ErrNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	prefix, err := questionEventPrefix(id)
	if err != nil {
		return err
	}
	var keys [][]byte
	c := tx.Bucket(bucketQuestionEvents).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		if err := tx.Bucket(bucketEvents).Delete(u64(seqOfSuffix(k))); err != nil {
			return err
		}
		if err := tx.Bucket(bucketQuestionEvents).Delete(k); err != nil {
			return err
		}
	}
	if q.Open() { // not reached through Purge; keeps the indexes whole regardless
		if err := unindexOpen(tx, q); err != nil {
			return err
		}
	}
	if err := tx.Bucket(bucketCreated).Delete(timeIDKey(q.CreatedAt, q.ID)); err != nil {
		return err
	}
	if q.Idempotency != nil {
		if err := tx.Bucket(bucketIdempotency).Delete([]byte(q.Idempotency.Key)); err != nil {
			return err
		}
	}
	return tx.Bucket(bucketQuestions).Delete([]byte(id))
}

// purgeRuns drops the markers of runs that ended before cutoff (law 9):
// after the retention period an ask into such a run is no longer refused.
func purgeRuns(tx *bbolt.Tx, cutoff time.Time) (int, error) {
	b := tx.Bucket(bucketRuns)
	var old [][]byte
	err := b.ForEach(func(k, v []byte) error {
		var r runRecord
		if json.Unmarshal(v, &r) == nil && r.EndedAt.Before(cutoff) {
			old = append(old, bytes.Clone(k))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, k := range old {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(old), nil
}

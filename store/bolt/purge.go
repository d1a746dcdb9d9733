package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// What a purge frees, bbolt keeps: its pages go on the file's free list
// and later commits reuse them, so a file under a steady retention stops
// growing, but it never gets smaller than its largest size (a backlog
// once held, a retention since shortened). `bbolt compact` copies it
// into a smaller file while askbridge is stopped.

// purgeBatch bounds what one write transaction of a purge drops of the
// keys that expire or age out by themselves (loose events, Once keys,
// expiring values), and how many of those keys one read looks at, so that
// a purge holds the single writer for a short while at a time however
// many have piled up.
const purgeBatch = 1000

// Purge drops at most limit questions closed before cutoff with their
// events and index entries; then, once fewer than limit were left to drop,
// every event older than cutoff that belongs to no stored question
// (refusals of unknown ids), every Once key and every value whose expiry
// has passed and the marker of every run ended before cutoff, batch by
// batch, each batch its own write transaction, until a batch comes up
// short. Those go regardless of how many questions closed (chat traffic
// leaves thousands of keys to expire between purges that no question ever
// closes), by the last call of core's purge, which purges again while a
// purge returns limit: once, not once per call, as every sweep reads every
// Once key, expiring value and run marker.
func (s *Store) Purge(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	const op = "purge"
	var closed, loose [][]byte
	err := s.update(ctx, op, func(tx *bbolt.Tx) error {
		end := msKey(cutoff)
		closed = keysBefore(tx.Bucket(bucketClosed), end, limit)
		loose = keysBefore(tx.Bucket(bucketLooseEvents), end, purgeBatch)
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
		if len(closed) == 0 && len(loose) == 0 {
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
	if limit > 0 && len(closed) == limit {
		return len(closed), nil // called again (see above)
	}
	if len(loose) == purgeBatch { // more may be left
		if err := s.purgeLoose(ctx, cutoff); err != nil {
			return len(closed), err
		}
	}
	// Keys seen once, expiring values and leases expire on the store's
	// own clock.
	if err := s.purgeExpired(ctx, bucketOnce, onceExpiry); err != nil {
		return len(closed), err
	}
	if err := s.purgeExpired(ctx, bucketValuesTTL, valueExpiry); err != nil {
		return len(closed), err
	}
	// A lease past its time reads as free already; its key stays until
	// here (every card's posting mark, every reminder's claim).
	if err := s.purgeExpired(ctx, bucketLeasesKV, leaseExpiry); err != nil {
		return len(closed), err
	}
	// The markers of runs ended before the cutoff (law 9): after the
	// retention period an ask into such a run is no longer refused. One
	// is kept for every run an agent ended, so they are read and dropped
	// a batch at a time, as the keys above, not in one transaction.
	if err := s.purgeWhere(ctx, bucketRuns, runEndedBefore(cutoff)); err != nil {
		return len(closed), err
	}
	return len(closed), nil
}

// runEndedBefore is whether a run marker says its run ended before
// cutoff. One that cannot be read is kept: an ask into its run is
// refused, rather than let in on a guess.
func runEndedBefore(cutoff time.Time) func(v []byte, _ time.Time) bool {
	return func(v []byte, _ time.Time) bool {
		var r runRecord
		return json.Unmarshal(v, &r) == nil && r.EndedAt.Before(cutoff)
	}
}

// purgeLoose drops the events older than cutoff that belong to no stored
// question, purgeBatch at a time, each batch with its checkpoint, until a
// batch comes up short. A batch of purgeBatch drops purgeBatch-1 more
// than the one checkpoint it adds, so this ends.
func (s *Store) purgeLoose(ctx context.Context, cutoff time.Time) error {
	for {
		var loose [][]byte
		err := s.update(ctx, "purge", func(tx *bbolt.Tx) error {
			loose = keysBefore(tx.Bucket(bucketLooseEvents), msKey(cutoff), purgeBatch)
			if len(loose) == 0 {
				return errNoChange
			}
			seqs := make([]uint64, 0, len(loose))
			for _, k := range loose {
				seqs = append(seqs, seqOfSuffix(k))
			}
			if err := s.checkpoint(tx, seqs, cutoff, s.now()); err != nil {
				return err
			}
			return dropLoose(tx, loose)
		})
		if err != nil || len(loose) < purgeBatch {
			return err
		}
	}
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

package bolt

import (
	"context"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// A delivery enqueued with a Delay (core.Delivery.Delay) is an ordinary
// outbox record that is due only later (its Due), marked Pending and
// indexed by its key in held/<surface>, so Cancel finds it without
// scanning the outbox. A claim that takes it clears both, so the index
// holds only what a claim has not taken yet.
//
// Records written before the delay was generic (a held card update of
// core.Transition.Hold) carry a heldMark instead of Pending, under the
// same index: they read as pending, so a claim takes them once due and
// clears them the same way. No migration is needed.

// heldMark is how a record held for a caller's response was marked before
// delays were generic: the question's version then, which Cancel no longer
// reads (the condition is the canceller's, core.Pending.IfVersion).
type heldMark struct {
	Ver int64 `json:"ver"`
}

// pending reports whether rec waits to be cancelled or claimed.
func (rec *outboxRecord) pending() bool { return rec.Pending || rec.Held != nil }

// dues is when each delayed delivery of out falls due, by its index, on
// the store's clock: fixed before the transaction, so that a transaction
// run again delays them the same. Nil when none is delayed.
func (s *Store) dues(out []core.Delivery) []time.Time {
	var (
		due []time.Time
		now time.Time
	)
	for i, d := range out {
		if d.Delay <= 0 {
			continue
		}
		if due == nil {
			due, now = make([]time.Time, len(out)), s.now()
		}
		due[i] = now.Add(d.Delay)
	}
	return due
}

// enqueueDue enqueues d, out[i] of a batch whose delays dues fixed: at
// once, or, delayed, due at dues[i] and indexed for Cancel.
func enqueueDue(tx *bbolt.Tx, d core.Delivery, dues []time.Time, i int, eff *effects) error {
	if d.Delay <= 0 {
		return enqueue(tx, d, eff)
	}
	return enqueueLater(tx, d, dues[i], eff)
}

// enqueueLater enqueues d due at due, marked pending and indexed by its
// key; a pending delivery under the same key is replaced, so a key waits
// once (a replayed enqueue leaves one delivery).
func enqueueLater(tx *bbolt.Tx, d core.Delivery, due time.Time, eff *effects) error {
	pb, err := tx.CreateBucketIfNotExists(heldBucket(d.Surface))
	if err != nil {
		return err
	}
	if v := pb.Get([]byte(d.Key)); v != nil {
		seq := seqOfSuffix(v)
		ob, rec, err := readOutbox(tx, d.Surface, seq)
		if err != nil && err != errNoChange {
			return err
		}
		if rec != nil && rec.pending() && rec.Lease == nil && rec.Delivery.Key == d.Key {
			if err := ob.Delete(u64(seq)); err != nil {
				return err
			}
			if err := unindexUnleased(tx, d.Surface, rec, seq); err != nil {
				return err
			}
		}
	}
	d.Delay = 0
	seq, err := enqueueRecord(tx, outboxRecord{Delivery: d, Due: due, Pending: true}, eff)
	if err != nil {
		return err
	}
	return pb.Put([]byte(d.Key), u64(seq))
}

// unpend clears rec's pending mark and index entry as a claim takes it.
func unpend(tx *bbolt.Tx, surface core.Surface, rec *outboxRecord) error {
	if !rec.pending() {
		return nil
	}
	rec.Pending, rec.Held = false, nil
	if pb := tx.Bucket(heldBucket(surface)); pb != nil {
		return pb.Delete([]byte(rec.Delivery.Key))
	}
	return nil
}

// Cancel deletes a delayed delivery that no claim has taken, in one
// transaction, unless p.IfVersion is set and its question has moved on.
func (s *Store) Cancel(ctx context.Context, p core.Pending) (bool, error) {
	const op = "cancel"
	if !p.Surface.HasOutbox() {
		return false, core.Errorf(core.CodeInvalid, op, "only %s have outboxes, not %q", core.SurfaceNames(core.OutboxSurfaces), p.Surface)
	}
	var cancelled bool
	err := s.update(ctx, op, func(tx *bbolt.Tx) error {
		cancelled = false
		pb := tx.Bucket(heldBucket(p.Surface))
		if pb == nil {
			return errNoChange
		}
		v := pb.Get([]byte(p.Key))
		if v == nil {
			return errNoChange
		}
		seq := seqOfSuffix(v)
		ob, rec, err := readOutbox(tx, p.Surface, seq)
		if err != nil && err != errNoChange {
			return err
		}
		if rec == nil || !rec.pending() || rec.Lease != nil || rec.Delivery.Key != p.Key {
			// Not the pending record the index names (a stale entry):
			// the entry goes, whatever the record is stays.
			return pb.Delete([]byte(p.Key))
		}
		if p.IfVersion != nil {
			q, err := getQuestion(tx, p.QuestionID)
			if err != nil && core.ErrorCode(err) != core.CodeNotFound {
				return err
			}
			if q == nil || q.Version != *p.IfVersion {
				return errNoChange // changed (or gone) since: it runs
			}
		}
		if err := ob.Delete(u64(seq)); err != nil {
			return err
		}
		if err := unindexUnleased(tx, p.Surface, rec, seq); err != nil {
			return err
		}
		cancelled = true
		return pb.Delete([]byte(p.Key))
	})
	return cancelled, err
}

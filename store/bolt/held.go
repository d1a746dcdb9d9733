package bolt

import (
	"context"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// A held update (core.Transition.Hold) is an ordinary outbox record that
// is due only later (its Due), marked Held and indexed by its key in
// held/<surface>, so DropHeld finds it without scanning the outbox. A
// claim that takes it clears both, so the index holds only what is still
// waiting.

// heldMark is what a held record remembers of its question: its version
// when the update was held, so that a drop after a later change leaves
// the update to run.
type heldMark struct {
	Ver int64 `json:"ver"`
}

// enqueueHeld enqueues the held update d, due at due, marked with ver, the
// version of the question that holds it, and indexes it for DropHeld.
func enqueueHeld(tx *bbolt.Tx, d core.Delivery, ver int64, due time.Time, eff *effects) error {
	seq, err := enqueueRecord(tx, outboxRecord{Delivery: d, Due: due, Held: &heldMark{Ver: ver}}, eff)
	if err != nil {
		return err
	}
	hb, err := tx.CreateBucketIfNotExists(heldBucket(d.Surface))
	if err != nil {
		return err
	}
	return hb.Put([]byte(d.Key), u64(seq))
}

// unhold clears rec's held mark and index entry as a claim takes it.
func unhold(tx *bbolt.Tx, surface core.Surface, rec *outboxRecord) error {
	if rec.Held == nil {
		return nil
	}
	rec.Held = nil
	if hb := tx.Bucket(heldBucket(surface)); hb != nil {
		return hb.Delete([]byte(rec.Delivery.Key))
	}
	return nil
}

// DropHeld deletes a held update that no claim has taken, in one
// transaction, unless its question has changed since it was held.
func (s *Store) DropHeld(ctx context.Context, h core.Held) (bool, error) {
	const op = "drop held"
	if !h.Surface.IsChat() {
		return false, core.Errorf(core.CodeInvalid, op, "only chat surfaces have outboxes, not %q", h.Surface)
	}
	var dropped bool
	err := s.update(ctx, op, func(tx *bbolt.Tx) error {
		dropped = false
		hb := tx.Bucket(heldBucket(h.Surface))
		if hb == nil {
			return errNoChange
		}
		v := hb.Get([]byte(h.Key))
		if v == nil {
			return errNoChange
		}
		seq := seqOfSuffix(v)
		ob, rec, err := readOutbox(tx, h.Surface, seq)
		if err != nil && err != errNoChange {
			return err
		}
		if rec == nil || rec.Held == nil || rec.Lease != nil || rec.Delivery.Key != h.Key {
			// Not the held record the index names (a stale entry): the
			// entry goes, whatever the record is stays.
			return hb.Delete([]byte(h.Key))
		}
		q, err := getQuestion(tx, h.QuestionID)
		if err != nil && core.ErrorCode(err) != core.CodeNotFound {
			return err
		}
		if q == nil || q.Version != rec.Held.Ver {
			return errNoChange // changed (or gone) since: the update runs
		}
		if err := ob.Delete(u64(seq)); err != nil {
			return err
		}
		dropped = true
		return hb.Delete([]byte(h.Key))
	})
	return dropped, err
}

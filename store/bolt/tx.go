package bolt

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// effects is what a transaction must announce once it has committed:
// the questions written, whose watchers wake, and the surfaces whose
// Claims wake. A question is noted as core computed it (Commit) or, when
// the store changed it itself (mutate), as the record it wrote, decoded
// after the commit only if it is watched (watchedCopies.wroteRecord).
type effects struct {
	written  []*core.Question
	records  []writtenRecord
	surfaces map[core.Surface]bool
}

// writtenRecord is a question record written at version ver.
type writtenRecord struct {
	id     core.QuestionID
	ver    int64
	record []byte
}

// changed notes that q was written as it is.
func (e *effects) changed(q *core.Question) { e.written = append(e.written, q) }

// changedRecord notes that id's question was written, at ver, as record.
func (e *effects) changedRecord(id core.QuestionID, ver int64, record []byte) {
	e.records = append(e.records, writtenRecord{id, ver, record})
}

func (e *effects) enqueued(s core.Surface) {
	if e.surfaces == nil {
		e.surfaces = make(map[core.Surface]bool)
	}
	e.surfaces[s] = true
}

// announce runs after the commit: durable before visible (law 3).
// The watched copies learn of each write before its watchers wake.
func (s *Store) announce(e *effects) {
	for _, q := range e.written {
		s.copies.wrote(q)
		s.watches.Signal(q.ID)
	}
	for _, w := range e.records {
		s.copies.wroteRecord(w.id, w.ver, w.record)
		s.watches.Signal(w.id)
	}
	s.ready.fire(e.surfaces)
}

// mutate is the shape of the changes of one question that core does not
// compute whole (a renotice, a recorded card): in one write transaction
// it reads the question, lets change edit it (and write what else it
// must: indexes, events, outbox entries, noting them in eff), and stores
// it one version on (so that a Change computed before goes stale); the
// wake-ups follow the commit (law 3). change may return
// errNoChange (nothing is written, and no error returned) or a refuse()d
// error, both before its first write, to leave everything as it was.
func (s *Store) mutate(ctx context.Context, op string, id core.QuestionID, change func(tx *bbolt.Tx, q *core.Question, eff *effects) error) error {
	var eff effects
	err := s.update(ctx, op, func(tx *bbolt.Tx) error {
		eff = effects{}
		q, err := getQuestion(tx, id)
		if err != nil {
			return refuse(err) // nothing written yet
		}
		if err := change(tx, q, &eff); err != nil {
			return err
		}
		q.Version++
		record, err := encodeQuestion(q)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketQuestions).Put([]byte(id), record); err != nil {
			return err
		}
		// Not decoded back here, inside the one writer's transaction:
		// after the commit, and only if the question is watched.
		eff.changedRecord(id, q.Version, record)
		return nil
	})
	if err != nil {
		return err
	}
	s.announce(&eff)
	return nil
}

// getQuestion reads a question inside tx; ErrNotFound if absent.
func getQuestion(tx *bbolt.Tx, id core.QuestionID) (*core.Question, error) {
	v := tx.Bucket(bucketQuestions).Get([]byte(id))
	if v == nil {
		return nil, core.ErrNotFound
	}
	return decodeQuestion(v)
}

// getHead reads what a compare-and-set compares of a stored question
// (questionHead) inside tx; ErrNotFound if absent.
func getHead(tx *bbolt.Tx, id core.QuestionID) (questionHead, error) {
	v := tx.Bucket(bucketQuestions).Get([]byte(id))
	if v == nil {
		return questionHead{}, core.ErrNotFound
	}
	return decodeHead(v)
}

// indexOpen adds q to the indexes of open questions; its entry in the
// open index carries what an inbox filter matches (openEntry).
func indexOpen(tx *bbolt.Tx, q *core.Question) error {
	entry, err := json.Marshal(openEntryOf(q))
	if err != nil {
		return err
	}
	if err := tx.Bucket(bucketOpen).Put(openKey(q), entry); err != nil {
		return err
	}
	if !q.Deadline.IsZero() {
		if err := tx.Bucket(bucketDeadline).Put(timeIDKey(q.Deadline, q.ID), nil); err != nil {
			return err
		}
	}
	k, err := runOpenKey(q.Run().Key(), q.ID)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketRunOpen).Put(k, nil)
}

// unindexOpen drops q (as stored before it closed) from those indexes.
func unindexOpen(tx *bbolt.Tx, q *core.Question) error {
	if err := tx.Bucket(bucketOpen).Delete(openKey(q)); err != nil {
		return err
	}
	if err := tx.Bucket(bucketDeadline).Delete(timeIDKey(q.Deadline, q.ID)); err != nil {
		return err
	}
	k, err := runOpenKey(q.Run().Key(), q.ID)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketRunOpen).Delete(k)
}

// checkDeliveries refuses, before anything is written, deliveries that
// have no outbox to go to: a delivery to a surface without one (the
// console, the API, a misspelt name, none) could never be claimed, so
// storing it would lose it silently.
func checkDeliveries(op string, out []core.Delivery) error {
	for i, d := range out {
		if !d.Surface.HasOutbox() {
			return core.Errorf(core.CodeInvalid, op, "delivery %d goes to %q; deliveries go to %s", i, d.Surface, core.SurfaceNames(core.OutboxSurfaces))
		}
	}
	return nil
}

// enqueue appends d to its surface's outbox.
func enqueue(tx *bbolt.Tx, d core.Delivery, eff *effects) error {
	_, err := enqueueRecord(tx, outboxRecord{Delivery: d}, eff)
	return err
}

// enqueueRecord appends rec to its delivery's surface's outbox and
// returns its seq.
func enqueueRecord(tx *bbolt.Tx, rec outboxRecord, eff *effects) (uint64, error) {
	ob, err := tx.CreateBucketIfNotExists(outboxBucket(rec.Delivery.Surface))
	if err != nil {
		return 0, err
	}
	seq, err := ob.NextSequence()
	if err != nil {
		return 0, err
	}
	rec.V = schemaVersion
	rec.Delivery.ID, rec.Delivery.Attempts = "", 0
	b, err := json.Marshal(rec)
	if err != nil {
		return 0, fmt.Errorf("encode delivery: %w", err)
	}
	if err := ob.Put(u64(seq), b); err != nil {
		return 0, err
	}
	if err := indexUnleased(tx, rec.Delivery.Surface, &rec, seq); err != nil {
		return 0, err
	}
	eff.enqueued(rec.Delivery.Surface)
	return seq, nil
}

// enqueueUpdate asks card (an index into q.Messages) to be edited to q's
// state at version ver, the change that causes it.
func enqueueUpdate(tx *bbolt.Tx, q *core.Question, ver int64, card int, now time.Time, eff *effects) error {
	return enqueue(tx, updateOf(q, card, core.UpdateKey(q.ID, ver, card), now), eff)
}

// updateOf is the update delivery of card (an index into q.Messages).
func updateOf(q *core.Question, card int, key string, now time.Time) core.Delivery {
	m := q.Messages[card]
	return core.Delivery{
		Key:        key,
		Kind:       core.DeliverUpdate,
		Surface:    m.Surface,
		Room:       m.Room,
		QuestionID: q.ID,
		Message:    &m,
		CreatedAt:  now,
	}
}

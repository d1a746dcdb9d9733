package bolt

import (
	"bytes"
	"context"
	"encoding/base64"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// Create stores q as open with its asked event and its deliveries, in one
// transaction. It fails with CodeConflict if the id exists or the run has
// ended.
func (s *Store) Create(ctx context.Context, q *core.Question, asked core.Event, out []core.Delivery) error {
	const op = "create"
	if q == nil || !core.ValidID(q.ID) {
		return core.Errorf(core.CodeInvalid, op, "question has no valid id")
	}
	if err := checkDeliveries(op, out); err != nil {
		return err
	}
	stored := *q
	stored.State = core.StateOpen
	stored.Resolution = nil
	// Encoded before the transaction, as Commit does: the one writer
	// waits for nothing it need not, and decodes nothing back.
	record, err := encodeQuestion(&stored)
	if err != nil {
		return core.Internal(op, err)
	}
	var eff effects
	err = s.update(ctx, op, func(tx *bbolt.Tx) error {
		eff = effects{}
		if tx.Bucket(bucketQuestions).Get([]byte(stored.ID)) != nil {
			return refuse(core.Errorf(core.CodeConflict, op, "question %s already exists", stored.ID))
		}
		// A repeat is checked before the run: a retry of an ask that was
		// parked just before its run ended still gets its question back.
		idem := stored.Idempotency
		if idem != nil {
			if id := tx.Bucket(bucketIdempotency).Get([]byte(idem.Key)); id != nil {
				first, err := getQuestion(tx, core.QuestionID(id))
				if err != nil {
					return err
				}
				return refuse(&core.DuplicateError{Question: first})
			}
		}
		if tx.Bucket(bucketRuns).Get([]byte(stored.Run().Key())) != nil {
			return refuse(core.Errorf(core.CodeConflict, op, "run %s has ended", stored.RunID))
		}
		// Every refusal is decided; the writes start here.
		if idem != nil {
			if err := tx.Bucket(bucketIdempotency).Put([]byte(idem.Key), []byte(stored.ID)); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketQuestions).Put([]byte(stored.ID), record); err != nil {
			return err
		}
		if err := tx.Bucket(bucketCreated).Put(timeIDKey(stored.CreatedAt, stored.ID), nil); err != nil {
			return err
		}
		if err := indexOpen(tx, &stored); err != nil {
			return err
		}
		if _, err := s.appendEvent(tx, core.CompleteEvent(asked, &stored, core.EventAsked, stored.CreatedAt)); err != nil {
			return err
		}
		for _, d := range out {
			if d.QuestionID == "" {
				d.QuestionID = stored.ID
			}
			if d.CreatedAt.IsZero() {
				d.CreatedAt = stored.CreatedAt
			}
			if err := enqueue(tx, d, &eff); err != nil {
				return err
			}
		}
		eff.changed(&stored)
		return nil
	})
	if err != nil {
		return err
	}
	s.announce(&eff)
	return nil
}

// Get returns the question, or ErrNotFound. A watched question's comes
// from its kept copy when there is one (copies.go), and a read of the
// file is kept for the next.
func (s *Store) Get(_ context.Context, id core.QuestionID) (*core.Question, error) {
	q, ticket := s.copies.lookup(id)
	if q != nil {
		return q, nil
	}
	err := s.view("get", func(tx *bbolt.Tx) error {
		var err error
		q, err = getQuestion(tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.copies.read(ticket, q)
	return q, nil
}

// ReadToChange is Get: a read here is a local transaction, with no round
// trip to save, and a watched question's copy is never behind a write of
// this store's.
func (s *Store) ReadToChange(ctx context.Context, id core.QuestionID) (*core.Question, error) {
	return s.Get(ctx, id)
}

// cursorEncoding makes a ListOpen cursor from the last key listed.
var cursorEncoding = base64.RawURLEncoding

// ListOpen lists open questions in the order of the open index. The cursor
// is the last key listed, so the next page starts right after it even if
// that question has closed meanwhile: no question is skipped or repeated.
func (s *Store) ListOpen(_ context.Context, cursor string, limit int) ([]*core.Question, string, error) {
	const op = "list open"
	var after []byte
	if cursor != "" {
		var err error
		after, err = cursorEncoding.DecodeString(cursor)
		if err != nil || len(after) < 9 {
			return nil, "", core.Errorf(core.CodeInvalid, op, "cursor %q is not one this store made", cursor)
		}
	}
	var (
		qs   []*core.Question
		next string
	)
	err := s.view(op, func(tx *bbolt.Tx) error {
		qs, next = nil, ""
		c := tx.Bucket(bucketOpen).Cursor()
		var k []byte
		if after == nil {
			k, _ = c.First()
		} else if k, _ = c.Seek(after); bytes.Equal(k, after) {
			k, _ = c.Next()
		}
		var last []byte
		for ; k != nil; k, _ = c.Next() {
			if limit > 0 && len(qs) == limit {
				next = cursorEncoding.EncodeToString(last)
				return nil
			}
			q, err := getQuestion(tx, idOfOpenKey(k))
			if err != nil {
				return err
			}
			qs, last = append(qs, q), bytes.Clone(k)
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return qs, next, nil
}

// Between lists questions created (or closed) in [from, to), oldest first.
func (s *Store) Between(_ context.Context, idx core.TimeIndex, from, to time.Time, limit int) ([]*core.Question, error) {
	const op = "between"
	var name []byte
	switch idx {
	case core.ByCreated:
		name = bucketCreated
	case core.ByClosed:
		name = bucketClosed
	default:
		return nil, core.Errorf(core.CodeInvalid, op, "no time index %q", idx)
	}
	var qs []*core.Question
	err := s.view(op, func(tx *bbolt.Tx) error {
		qs = nil
		end := msKey(to)
		c := tx.Bucket(name).Cursor()
		for k, _ := c.Seek(msKey(from)); k != nil && bytes.Compare(k[:8], end) < 0; k, _ = c.Next() {
			if limit > 0 && len(qs) == limit {
				break
			}
			q, err := getQuestion(tx, idOfTimeKey(k))
			if err != nil {
				return err
			}
			qs = append(qs, q)
		}
		return nil
	})
	return qs, err
}

// Due returns open questions whose deadline is at or before now.
func (s *Store) Due(_ context.Context, now time.Time, limit int) ([]core.QuestionID, error) {
	var ids []core.QuestionID
	err := s.view("due", func(tx *bbolt.Tx) error {
		ids = nil
		end := msKey(now)
		c := tx.Bucket(bucketDeadline).Cursor()
		for k, _ := c.First(); k != nil && bytes.Compare(k[:8], end) <= 0; k, _ = c.Next() {
			if limit > 0 && len(ids) == limit {
				break
			}
			ids = append(ids, idOfTimeKey(k))
		}
		return nil
	})
	return ids, err
}

package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// Commit writes a change core computed (core.Next), in one transaction,
// only while the question is still at the version it was computed from:
// the next state, the indexes of open and closed questions, the events
// and the card updates, a delayed one due only after its delay.
func (s *Store) Commit(ctx context.Context, c core.Change) (*core.Question, error) {
	const op = "commit"
	if c.Before == nil || c.Question == nil || c.Before.ID != c.Question.ID {
		return nil, core.Errorf(core.CodeInvalid, op, "a change needs the question before and after it")
	}
	if c.Question.Version != c.From()+1 {
		return nil, core.Errorf(core.CodeInvalid, op, "a change from version %d makes version %d, not %d", c.From(), c.From()+1, c.Question.Version)
	}
	if err := checkDeliveries(op, c.Updates); err != nil {
		return nil, err
	}
	id := c.Question.ID
	dues := s.dues(c.Updates)
	// Encoded before the transaction: the one writer waits for nothing it
	// need not.
	record, err := encodeQuestion(c.Question)
	if err != nil {
		return nil, core.Internal(op, err)
	}
	var eff effects
	err = s.update(ctx, op, func(tx *bbolt.Tx) error {
		eff = effects{}
		// The compare: only the stored version and state are decoded. At
		// the version the change was computed from, the stored question
		// is c.Before (every write bumps the version), so the rest is
		// read from there; the whole record is decoded only to refuse.
		head, err := getHead(tx, id)
		if err != nil {
			return refuse(err)
		}
		if head.Ver != c.From() || head.State != core.StateOpen {
			stored, err := getQuestion(tx, id)
			if err != nil {
				return refuse(err)
			}
			return refuse(&core.StaleError{Question: stored})
		}
		if !c.Question.Open() {
			if err := unindexOpen(tx, c.Before); err != nil {
				return err
			}
			at := c.Now
			if r := c.Question.Resolution; r != nil && !r.At.IsZero() {
				at = r.At
			}
			if err := tx.Bucket(bucketClosed).Put(timeIDKey(at, id), nil); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketQuestions).Put([]byte(id), record); err != nil {
			return err
		}
		for _, e := range c.Events {
			if _, err := s.appendEvent(tx, e); err != nil {
				return err
			}
		}
		for i, d := range c.Updates {
			if err := enqueueDue(tx, d, dues, i, &eff); err != nil {
				return err
			}
		}
		eff.changed(c.Question)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.announce(&eff)
	return c.Question, nil
}

// Renotify applies r to an open question: moves its deadline, counts the
// re-notice, appends its event and enqueues its deliveries.
func (s *Store) Renotify(ctx context.Context, r core.Renotice) error {
	const op = "renotify"
	if err := checkDeliveries(op, r.Deliveries); err != nil {
		return err
	}
	return s.mutate(ctx, op, r.QuestionID, func(tx *bbolt.Tx, q *core.Question, eff *effects) error {
		if !q.Open() {
			return refuse(&core.ClosedError{Question: q})
		}
		if !r.IfDeadline.IsZero() && !q.Deadline.Equal(r.IfDeadline) {
			return refuse(core.Errorf(core.CodeConflict, op, "the deadline of question %s has already moved", q.ID))
		}
		if !r.Deadline.IsZero() {
			deadlines := tx.Bucket(bucketDeadline)
			if err := deadlines.Delete(timeIDKey(q.Deadline, q.ID)); err != nil {
				return err
			}
			q.Deadline = r.Deadline
			if err := deadlines.Put(timeIDKey(q.Deadline, q.ID), nil); err != nil {
				return err
			}
		}
		if r.Count {
			q.Renotified++
		}
		if _, err := s.appendEvent(tx, core.CompleteEvent(r.Event, q, "", r.Now)); err != nil {
			return err
		}
		for _, d := range r.Deliveries {
			if d.QuestionID == "" {
				d.QuestionID = q.ID
			}
			if d.CreatedAt.IsZero() {
				d.CreatedAt = r.Now
			}
			if err := enqueue(tx, d, eff); err != nil {
				return err
			}
		}
		return nil
	})
}

// RecordMessage stores a posted card and appends notified, once per
// delivery key. A card recorded after the question closed (its post raced
// the close, so the close enqueued no edit for it) gets an update
// delivery at once, so every card ends up showing the outcome.
func (s *Store) RecordMessage(ctx context.Context, id core.QuestionID, ref core.MessageRef, notified core.Event) error {
	const op = "record message"
	return s.mutate(ctx, op, id, func(tx *bbolt.Tx, q *core.Question, eff *effects) error {
		if ref.Delivery != "" {
			for _, m := range q.Messages {
				if m.Delivery == ref.Delivery {
					return errNoChange // a repeat
				}
			}
		}
		q.Messages = append(q.Messages, ref)
		at := ref.At
		if at.IsZero() {
			at = s.now().UTC().Truncate(time.Millisecond)
		}
		ev, err := s.appendEvent(tx, core.CompleteEvent(notified, q, core.EventNotified, at))
		if err != nil {
			return err
		}
		// The card may have been drawn from the question before it
		// changed (closed, or form items answered): edit it at once.
		if !q.Open() || len(q.Answers) > 0 || len(q.Votes) > 0 {
			if err := enqueueUpdate(tx, q, q.Version+1, len(q.Messages)-1, ev.At, eff); err != nil {
				return err
			}
		}
		return nil
	})
}

// EndRun marks a run (its core.Run key) ended, the first time winning,
// and returns the ids of its open questions.
func (s *Store) EndRun(ctx context.Context, runID string, at time.Time) ([]core.QuestionID, error) {
	const op = "end run"
	if runID == "" {
		return nil, core.Errorf(core.CodeInvalid, op, "run id is required")
	}
	var ids []core.QuestionID
	err := s.update(ctx, op, func(tx *bbolt.Tx) error {
		ids = nil
		prefix, err := runOpenPrefix(runID)
		if err != nil {
			return err
		}
		c := tx.Bucket(bucketRunOpen).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			ids = append(ids, core.QuestionID(k[len(prefix):]))
		}
		runs := tx.Bucket(bucketRuns)
		if runs.Get([]byte(runID)) != nil {
			return errNoChange
		}
		b, err := json.Marshal(runRecord{V: schemaVersion, EndedAt: at})
		if err != nil {
			return err
		}
		return runs.Put([]byte(runID), b)
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

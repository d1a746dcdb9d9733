package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// Append adds an event that goes with no state change.
func (s *Store) Append(ctx context.Context, e core.Event) (core.Event, error) {
	if e.Kind == "" {
		return core.Event{}, core.Errorf(core.CodeInvalid, "append", "an event needs a kind")
	}
	var stored core.Event
	err := s.update(ctx, "append", func(tx *bbolt.Tx) error {
		var err error
		stored, err = s.appendEvent(tx, e)
		return err
	})
	if err != nil {
		return core.Event{}, err
	}
	return stored, nil
}

// Events returns events with Seq > since, in order, at most limit (all
// when limit <= 0).
func (s *Store) Events(_ context.Context, since int64, limit int) ([]core.Event, error) {
	from := uint64(1)
	if since > 0 {
		from = uint64(since) + 1
	}
	var evs []core.Event
	err := s.view("events", func(tx *bbolt.Tx) error {
		evs = nil
		c := tx.Bucket(bucketEvents).Cursor()
		for k, v := c.Seek(u64(from)); k != nil; k, v = c.Next() {
			if limit > 0 && len(evs) == limit {
				break
			}
			var e core.Event
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("decode event %d: %w", seqOfSuffix(k), err)
			}
			e.Seq = int64(seqOfSuffix(k))
			evs = append(evs, e)
		}
		return nil
	})
	return evs, err
}

// QuestionEvents reads one question's events through its question-events
// keys, in seq order, at most limit (all when limit <= 0).
func (s *Store) QuestionEvents(_ context.Context, id core.QuestionID, limit int) ([]core.Event, error) {
	prefix, err := questionEventPrefix(id)
	if err != nil {
		return nil, nil // no stored question has such an id
	}
	var evs []core.Event
	err = s.view("question events", func(tx *bbolt.Tx) error {
		evs = nil
		events := tx.Bucket(bucketEvents)
		c := tx.Bucket(bucketQuestionEvents).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			if limit > 0 && len(evs) == limit {
				break
			}
			seq := seqOfSuffix(k)
			v := events.Get(u64(seq))
			if v == nil {
				continue
			}
			var e core.Event
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("decode event %d: %w", seq, err)
			}
			e.Seq = int64(seq)
			evs = append(evs, e)
		}
		return nil
	})
	return evs, err
}

package bolt

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"sort"
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
	var eff effects
	err := s.update(ctx, op, func(tx *bbolt.Tx) error {
		eff = effects{}
		if tx.Bucket(bucketQuestions).Get([]byte(stored.ID)) != nil {
			return refuse(core.Errorf(core.CodeConflict, op, "question %s already exists", stored.ID))
		}
		// A repeat is checked before the run: a retry of an ask that was
		// parked just before its run ended still gets its question back.
		idem := stored.Idempotency
		if idem != nil {
			if id := tx.Bucket(bucketIdempotency).Get([]byte(idem.Key)); id != nil {
				first, err := getQuestion(tx, string(id))
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
		if _, err := putQuestion(tx, &stored); err != nil {
			return err
		}
		if err := tx.Bucket(bucketCreated).Put(timeIDKey(stored.CreatedAt, stored.ID), nil); err != nil {
			return err
		}
		if err := indexOpen(tx, &stored); err != nil {
			return err
		}
		if _, err := appendEvent(tx, eventFor(asked, &stored, core.EventAsked, stored.CreatedAt)); err != nil {
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
		eff.changed(stored.ID)
		return nil
	})
	if err != nil {
		return err
	}
	s.announce(&eff)
	return nil
}

// Get returns the question, or ErrNotFound.
func (s *Store) Get(_ context.Context, id string) (*core.Question, error) {
	var q *core.Question
	err := s.view("get", func(tx *bbolt.Tx) error {
		var err error
		q, err = getQuestion(tx, id)
		return err
	})
	return q, err
}

// Resolve is the chokepoint's atomic step: it applies t only if the
// question is open, records form items, closes the question when t says
// so, and enqueues an edit of every card, all in one transaction.
func (s *Store) Resolve(ctx context.Context, t core.Transition) (*core.Question, error) {
	const op = "resolve"
	return s.mutate(ctx, op, t.QuestionID, func(tx *bbolt.Tx, q *core.Question, eff *effects) error {
		if !q.Open() {
			return refuse(&core.ClosedError{Question: q})
		}
		if len(t.Items) == 0 && t.Resolution == nil && t.Vote == nil {
			return errNoChange
		}

		// Decide everything before the first write, so a refusal changes
		// nothing.
		seen := make(map[string]bool, len(t.Items))
		for _, a := range t.Items {
			if _, done := q.Answered(a.ItemID); done || seen[a.ItemID] {
				return refuse(core.Errorf(core.CodeConflict, op, "form item %s of question %s already has an answer", a.ItemID, q.ID))
			}
			seen[a.ItemID] = true
		}
		var res *core.Resolution
		if t.Resolution != nil {
			r := *t.Resolution
			res = &r
		}
		if len(t.Items) > 0 && res != nil {
			if !allAnswered(q, seen) {
				res = nil // a form closes only once every item has an answer
			} else {
				res.State = core.StateAnswered
			}
		}
		if v := t.Vote; v != nil {
			votes := 1
			for _, prev := range q.Votes {
				if prev.Key == v.Key {
					return refuse(core.AlreadyCounted(op))
				}
				if prev.Choice == v.Choice {
					votes++
				}
			}
			if votes < t.Needed {
				res = nil // the question closes at the vote that reaches the threshold
			}
		}
		if res != nil && !res.State.Closed() {
			return refuse(core.Errorf(core.CodeInvalid, op, "resolution state %q is not a closed state", res.State))
		}

		if res != nil {
			if err := unindexOpen(tx, q); err != nil {
				return err
			}
		}
		for _, a := range t.Items {
			if a.At.IsZero() {
				a.At = t.Now
			}
			q.Answers = append(q.Answers, a)
		}
		sortAnswers(q)
		if v := t.Vote; v != nil {
			vote := *v
			vote.Decider.Roles = nil // checked, never stored
			if vote.At.IsZero() {
				vote.At = t.Now
			}
			q.Votes = append(q.Votes, vote)
			core.SortVotes(q.Votes)
		}
		var ev core.Event
		if res != nil {
			if res.At.IsZero() {
				res.At = t.Now
			}
			q.State = res.State
			q.Resolution = res
			if err := tx.Bucket(bucketClosed).Put(timeIDKey(res.At, q.ID), nil); err != nil {
				return err
			}
			// Close events are named after the state they enter.
			ev = eventFor(t.Event, q, core.EventKind(res.State), t.Now)
		} else if t.Vote != nil {
			ev = eventFor(t.VoteEvent, q, core.EventVoted, t.Now)
		} else {
			ev = eventFor(t.ItemEvent, q, core.EventItemAnswered, t.Now)
		}
		ev, err := appendEvent(tx, ev)
		if err != nil {
			return err
		}
		for i := range q.Messages {
			if err := enqueueUpdate(tx, q, ev.Seq, i, t.Now, eff); err != nil {
				return err
			}
		}
		return nil
	})
}

// allAnswered reports whether every item of q (or call of a batch) is
// answered, counting those being recorded now.
func allAnswered(q *core.Question, now map[string]bool) bool {
	for _, id := range q.PartIDs() {
		if _, ok := q.Answered(id); !ok && !now[id] {
			return false
		}
	}
	return true
}

// sortAnswers keeps answers in item (or call) order; answers to unknown
// items last.
func sortAnswers(q *core.Question) {
	ids := q.PartIDs()
	pos := make(map[string]int, len(ids))
	for i, id := range ids {
		pos[id] = i
	}
	rank := func(id string) int {
		if p, ok := pos[id]; ok {
			return p
		}
		return len(ids)
	}
	sort.SliceStable(q.Answers, func(i, j int) bool {
		return rank(q.Answers[i].ItemID) < rank(q.Answers[j].ItemID)
	})
}

// Renotify applies r to an open question: moves its deadline, counts the
// re-notice, appends its event and enqueues its deliveries.
func (s *Store) Renotify(ctx context.Context, r core.Renotice) (*core.Question, error) {
	const op = "renotify"
	if err := checkDeliveries(op, r.Deliveries); err != nil {
		return nil, err
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
		if _, err := appendEvent(tx, eventFor(r.Event, q, "", r.Now)); err != nil {
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
func (s *Store) RecordMessage(ctx context.Context, id string, ref core.MessageRef, notified core.Event) (*core.Question, error) {
	const op = "record message"
	return s.mutate(ctx, op, id, func(tx *bbolt.Tx, q *core.Question, eff *effects) error {
		if ref.Delivery != "" {
			for _, m := range q.Messages {
				if m.Delivery == ref.Delivery {
					return errNoChange // a repeat: the question as stored
				}
			}
		}
		q.Messages = append(q.Messages, ref)
		at := ref.At
		if at.IsZero() {
			at = s.now().UTC().Truncate(time.Millisecond)
		}
		ev, err := appendEvent(tx, eventFor(notified, q, core.EventNotified, at))
		if err != nil {
			return err
		}
		// The card may have been drawn from the question before it
		// changed (closed, or form items answered): edit it at once.
		if !q.Open() || len(q.Answers) > 0 || len(q.Votes) > 0 {
			if err := enqueueUpdate(tx, q, ev.Seq, len(q.Messages)-1, ev.At, eff); err != nil {
				return err
			}
		}
		return nil
	})
}

// EndRun marks a run (its core.Run key) ended, the first time winning,
// and returns the ids of its open questions.
func (s *Store) EndRun(ctx context.Context, runID string, at time.Time) ([]string, error) {
	const op = "end run"
	if runID == "" {
		return nil, core.Errorf(core.CodeInvalid, op, "run id is required")
	}
	var ids []string
	err := s.update(ctx, op, func(tx *bbolt.Tx) error {
		ids = nil
		prefix, err := runOpenPrefix(runID)
		if err != nil {
			return err
		}
		c := tx.Bucket(bucketRunOpen).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			ids = append(ids, string(k[len(prefix):]))
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
func (s *Store) Due(_ context.Context, now time.Time, limit int) ([]string, error) {
	var ids []string
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

// Purge drops at most limit questions closed before cutoff with their
// events and index entries, and as many events older than cutoff that
// belong to no stored question (refusals of unknown ids).
func (s *Store) Purge(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	const op = "purge"
	var n int
	err := s.update(ctx, op, func(tx *bbolt.Tx) error {
		n = 0
		end := msKey(cutoff)
		var closed [][]byte
		c := tx.Bucket(bucketClosed).Cursor()
		for k, _ := c.First(); k != nil && bytes.Compare(k[:8], end) < 0; k, _ = c.Next() {
			if limit > 0 && len(closed) == limit {
				break
			}
			closed = append(closed, bytes.Clone(k))
		}
		for _, k := range closed {
			if err := dropQuestion(tx, idOfTimeKey(k)); err != nil {
				return err
			}
			if err := tx.Bucket(bucketClosed).Delete(k); err != nil {
				return err
			}
		}
		n = len(closed)

		var loose [][]byte
		c = tx.Bucket(bucketLooseEvents).Cursor()
		for k, _ := c.First(); k != nil && bytes.Compare(k[:8], end) < 0; k, _ = c.Next() {
			if limit > 0 && len(loose) == limit {
				break
			}
			loose = append(loose, bytes.Clone(k))
		}
		for _, k := range loose {
			if err := tx.Bucket(bucketEvents).Delete(u64(seqOfSuffix(k))); err != nil {
				return err
			}
			if err := tx.Bucket(bucketLooseEvents).Delete(k); err != nil {
				return err
			}
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
		if n == 0 && len(loose) == 0 && onceDropped == 0 && runsDropped == 0 {
			return errNoChange
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// dropQuestion deletes a question, its events and its index entries.
func dropQuestion(tx *bbolt.Tx, id string) error {
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

package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// Resolve is the chokepoint's atomic step: it applies t only if the
// question is open, records form items, closes the question when t says
// so, and enqueues an edit of every card, all in one transaction.
func (s *Store) Resolve(ctx context.Context, t core.Transition) (*core.Question, error) {
	const op = "resolve"
	var due time.Time // when a held update falls due: fixed once, so a re-run holds it the same
	if t.Hold != nil {
		due = s.now().Add(t.Hold.For)
	}
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
		held := heldCard(q, t.Hold)
		for i := range q.Messages {
			if i == held {
				err = enqueueHeld(tx, q, i, t.Hold.Key, t.Now, due, eff)
			} else {
				err = enqueueUpdate(tx, q, ev.Seq, i, t.Now, eff)
			}
			if err != nil {
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

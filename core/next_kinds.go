package core

import "slices"

// Each kind's home for the transition: what a transition asks of a
// question of that kind, decided against the question as stored (a part
// already answered, a vote already counted, a threshold reached), with
// no I/O. Next (next.go) holds what every kind shares: the closed
// question refused, the version, the next question built, its event and
// its card updates. A new kind of question names its rule in its home
// (kind.go's homes), composed from the features below or its own, and
// adds its rows to next_test.go's table; a new feature on a kind adds
// its decision here and its rule's use of it.

// nextRule decides what t does to q, the question as read: the
// resolution t closes q with (a copy of t.Resolution, which the rule
// may reshape), nil while q stays open, or a refusal that changes
// nothing.
type nextRule func(q *Question, t Transition) (*Resolution, error)

// Every kind takes every feature today, as Next always has: the ask and
// the answer's build are what narrow them (a quorum only on decisions
// and approvals, parts only on forms and batches), and the stores' tests
// vote on clarifications. A kind whose rule (kind.next, kind.go) drops a
// feature refuses, from then on, a transition asking it.

// nextEveryFeature is a close that may record parts and a vote.
var nextEveryFeature = withVote(withParts(nextClose))

// nextClose is a close with t's resolution as its attempt built it: an
// answer, an edit, a standing approval, or a close without an answer.
// Parts and a vote are features composed onto it (withParts, withVote).
func nextClose(_ *Question, t Transition) (*Resolution, error) {
	if t.Resolution == nil {
		return nil, nil
	}
	r := *t.Resolution
	return &r, nil
}

// withParts adds the parts of a form (its items) or a batch (its calls)
// to rule: each part t answers must have no answer yet, nor be given
// twice, and the question closes, as answered, only once every part has
// an answer, those recorded now included.
func withParts(rule nextRule) nextRule {
	return func(q *Question, t Transition) (*Resolution, error) {
		if len(t.Items) == 0 {
			return rule(q, t)
		}
		seen := make(map[string]bool, len(t.Items))
		for _, a := range t.Items {
			if _, done := q.Answered(a.ItemID); done || seen[a.ItemID] {
				part := "form item"
				if q.IsBatch() {
					part = "tool call"
				}
				return nil, conflictOf(errDecidedFirst, nextOp, "%s %s of question %s already has an answer", part, a.ItemID, q.ID)
			}
			seen[a.ItemID] = true
		}
		res, err := rule(q, t)
		if res == nil || err != nil {
			return res, err
		}
		if !allAnswered(q, seen) {
			return nil, nil // a form closes only once every item has an answer
		}
		res.State = StateAnswered
		return res, nil
	}
}

// withVote adds a quorum to rule: t's voter must not have voted, and
// the question closes only at the vote that brings its choice's votes,
// this one included and those it found discounted left out, to t.Needed.
func withVote(rule nextRule) nextRule {
	return func(q *Question, t Transition) (*Resolution, error) {
		res, err := rule(q, t)
		v := t.Vote
		if v == nil || err != nil {
			return res, err
		}
		votes := 1
		for _, prev := range q.Votes {
			if sameVoter(prev, v.Key, t.VoterKeys) {
				return nil, AlreadyCounted(nextOp)
			}
			if prev.Choice == v.Choice && !slices.Contains(v.Discounted, prev.Key) {
				votes++
			}
		}
		if votes < t.Needed {
			return nil, nil // the question closes at the vote that reaches the threshold
		}
		return res, nil
	}
}

// allAnswered reports whether every part of q (a form's items, a batch's
// calls) has an answer, counting those being recorded now.
func allAnswered(q *Question, now map[string]bool) bool {
	for _, id := range q.PartIDs() {
		if _, ok := q.Answered(id); !ok && !now[id] {
			return false
		}
	}
	return true
}

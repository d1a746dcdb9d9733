package redis

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/core"
)

// Resolve is the chokepoint: one script compares the state, records the
// items, closes, appends the event, enqueues the card updates and
// publishes the wake-up. When the caller hands in the question as it read
// it (t.Read) and the script finds it unchanged, the script answers with
// the new state only and the question after the transition is built here
// from that copy, instead of being sent back and decoded a second time.
func (s *Store) Resolve(ctx context.Context, t core.Transition) (*core.Question, error) {
	const op = "redis resolve"
	shard, ok := s.shardOf(t.QuestionID)
	if !ok {
		return nil, core.ErrNotFound
	}
	var (
		state, closeJSON, itemJSON string
		res                        *core.Resolution
		resJSON                    []byte
	)
	if t.Resolution != nil {
		r := *t.Resolution
		if len(t.Items) > 0 {
			r.State = core.StateAnswered // a form closes as answered
		}
		if !r.State.Closed() {
			return nil, core.Errorf(core.CodeInvalid, op, "a resolution must close the question, not leave it %q", r.State)
		}
		var err error
		if resJSON, err = json.Marshal(&r); err != nil {
			return nil, core.Internal(op, err)
		}
		state, res = string(r.State), &r
		if closeJSON, err = renderEvent(t.Event); err != nil {
			return nil, core.Internal(op, err)
		}
	}
	if len(t.Items) > 0 {
		var err error
		if itemJSON, err = renderEvent(t.ItemEvent); err != nil {
			return nil, core.Internal(op, err)
		}
	}
	var voteKey, choice string
	var voteJSON []byte
	if v := t.Vote; v != nil {
		var err error
		vv := *v
		vv.Decider.Roles = nil // checked, never stored
		if voteJSON, err = json.Marshal(&vv); err != nil {
			return nil, core.Internal(op, err)
		}
		if itemJSON, err = renderEvent(t.VoteEvent); err != nil {
			return nil, core.Internal(op, err)
		}
		voteKey, choice = v.Key, v.Choice
	}
	now, err := t.Now.MarshalJSON()
	if err != nil {
		return nil, core.Internal(op, err)
	}
	read := t.Read
	if read != nil && (read.ID != t.QuestionID || !read.Open() || t.Vote != nil) {
		// not a copy this transition can start from; a vote's outcome
		// depends on votes counted since, so it is read back
		read = nil
	}
	fp := ""
	if read != nil {
		fp = fingerprint(read)
	}
	sk := s.shardKeys(shard)
	card := heldCard(t)
	nkeys, nargs := 6+len(sk.boxes), 18+2*len(t.Items)
	if card > 0 {
		nkeys, nargs = nkeys+2, nargs+4
	}
	// The question's two keys in one allocation.
	both := sk.questionPrefix + t.QuestionID + sk.documentPrefix + t.QuestionID
	qkey, dkey := both[:len(sk.questionPrefix)+len(t.QuestionID)], both[len(sk.questionPrefix)+len(t.QuestionID):]
	cmd := scriptArgs(nkeys, nargs)
	cmd = append(cmd, qkey)
	cmd = append(cmd, sk.resolveKeys[:]...)
	cmd = append(cmd, dkey)
	cmd = append(cmd, sk.boxes...)
	if card > 0 {
		cmd = append(cmd, s.k.later(shard, t.Hold.Surface), s.k.held(shard, t.Hold.Surface))
	}
	if scriptHook != nil {
		keys := make([]string, 0, nkeys)
		for _, k := range cmd[3:] {
			keys = append(keys, k.(string))
		}
		scriptHook(resolveScript.name, keys)
	}
	cmd = append(cmd, sk.common[:]...)
	cmd = append(cmd,
		t.QuestionID, sk.wakeArg, now, msString(t.Now),
		state, resJSON, closeJSON, itemJSON, fp,
		voteKey, voteJSON, choice, t.Needed, len(t.Items))
	for _, a := range t.Items {
		b, err := json.Marshal(&a)
		if err != nil {
			return nil, core.Internal(op, err)
		}
		cmd = append(cmd, a.ItemID, b)
	}
	cmd = append(cmd, s.attempt())
	if card > 0 {
		cmd = append(cmd, card, t.Hold.Key, t.Hold.For.Milliseconds(), s.clock())
	}
	// Local waiters need not wait for the round trip through pub/sub, and
	// after a close they need not read the question back either.
	woken := s.resolving(t.QuestionID)
	r, err := s.runArgs(ctx, resolveScript, cmd)
	if err != nil {
		woken(nil) // the script may have run all the same
		return nil, core.Internal(op, err)
	}
	var q *core.Question
	if r.code == codeOK && r.n == 1 && read != nil && len(r.list) == 1 {
		q = applied(read, t.Items, core.State(r.list[0]), res)
	} else if q, err = s.outcome(op, t.QuestionID, r); err != nil {
		woken(nil)
		return nil, err
	}
	woken(q)
	return q, nil
}

// fingerprint is what of a question can change while it is open, as
// resolve.lua spells it from the hash: cards, answered items, deadline,
// renotices and votes. An open question with the same fingerprint as a
// copy read earlier is that copy (its document never changes).
func fingerprint(q *core.Question) string {
	deadline := ""
	if !q.Deadline.IsZero() {
		deadline = msString(q.Deadline)
	}
	return strconv.Itoa(len(q.Messages)) + " " + strconv.Itoa(len(q.Answers)) + " " + deadline + " " + strconv.Itoa(q.Renotified) +
		" " + strconv.Itoa(len(q.Votes))
}

// applied is read after resolve.lua applied items and, if it closed the
// question (state), res: what decodeQuestion would make of the hash.
func applied(read *core.Question, items []core.ItemAnswer, state core.State, res *core.Resolution) *core.Question {
	q := *read
	if len(items) > 0 {
		q.Answers = make([]core.ItemAnswer, 0, len(read.Answers)+len(items))
		q.Answers = append(q.Answers, read.Answers...)
		for _, a := range items {
			a.Decider.Roles = nil // checked, never stored
			q.Answers = append(q.Answers, a)
		}
		sortAnswers(&q)
	}
	if state.Closed() && res != nil {
		r := *res
		r.Decider.Roles = nil
		if r.Approved != nil {
			v := *r.Approved
			r.Approved = &v
		}
		q.State, q.Resolution = state, &r
	}
	return &q
}

// Renotify re-posts a still-open question and moves its deadline.
func (s *Store) Renotify(ctx context.Context, rn core.Renotice) (*core.Question, error) {
	const op = "redis renotify"
	shard, ok := s.shardOf(rn.QuestionID)
	if !ok {
		return nil, core.ErrNotFound
	}
	var ifDeadline, deadline, count string
	if !rn.IfDeadline.IsZero() {
		ifDeadline = msString(rn.IfDeadline)
	}
	if !rn.Deadline.IsZero() {
		deadline = msString(rn.Deadline)
	}
	if rn.Count {
		count = "1"
	}
	ev, err := renderEvent(rn.Event)
	if err != nil {
		return nil, core.Internal(op, err)
	}
	args := []any{
		shard, s.timed, surfaceList,
		rn.QuestionID, s.k.wake(shard), ifDeadline, deadline, count, ev,
	}
	if args, err = appendDeliveries(op, args, rn.Deliveries); err != nil {
		return nil, err
	}
	args = append(args, s.attempt())
	keys := append([]string{
		s.k.question(rn.QuestionID), s.k.events(shard), s.k.seq(shard), s.k.deadline(shard),
		s.k.document(rn.QuestionID),
	}, s.k.outboxes(shard)...)
	r, err := s.run(ctx, renotifyScript, keys, args...)
	if err != nil {
		return nil, core.Internal(op, err)
	}
	q, err := s.outcome(op, rn.QuestionID, r)
	if err == nil {
		s.wake(rn.QuestionID)
	}
	return q, err
}

// RecordMessage stores a posted card, once per delivery key.
func (s *Store) RecordMessage(ctx context.Context, id string, ref core.MessageRef, notified core.Event) (*core.Question, error) {
	const op = "redis record message"
	shard, ok := s.shardOf(id)
	if !ok {
		return nil, core.ErrNotFound
	}
	if !ref.Surface.IsChat() {
		return nil, core.Errorf(core.CodeInvalid, op, "cards are posted on chat surfaces, not %q", ref.Surface)
	}
	card, err := storeCard(id, ref)
	if err != nil {
		return nil, core.Internal(op, err)
	}
	ev, err := renderEvent(notified)
	if err != nil {
		return nil, core.Internal(op, err)
	}
	at, err := json.Marshal(ref.At)
	if err != nil {
		return nil, core.Internal(op, err)
	}
	keys := append([]string{
		s.k.question(id), s.k.events(shard), s.k.seq(shard), s.k.document(id),
	}, s.k.outboxes(shard)...)
	r, err := s.run(ctx, recordMessageScript, keys,
		shard, s.timed, surfaceList,
		id, s.k.wake(shard), ref.Delivery, string(ref.Surface), card, ev, at)
	if err != nil {
		return nil, core.Internal(op, err)
	}
	q, err := s.outcome(op, id, r)
	if err == nil {
		s.wake(id)
	}
	return q, err
}

// EndRun marks the run ended in every shard and collects its open
// questions. Each shard's step is atomic with the creates of that shard,
// and a question lives in one shard, so every question of the run is
// either refused at create or listed here.
func (s *Store) EndRun(ctx context.Context, runID string, at time.Time) ([]string, error) {
	const op = "redis end run"
	var ids []string
	for shard := range s.shards {
		r, err := s.run(ctx, endRunScript, []string{s.k.runs(shard), s.k.runOpen(shard)}, runID, msString(at))
		if err != nil {
			return nil, core.Internal(op, err)
		}
		if r.code != codeOK {
			return nil, core.Internal(op, errors.New("end run: unexpected code "+strconv.FormatInt(r.code, 10)))
		}
		// The index keeps closed questions until they are read here (or
		// purged): a close does not pay for removing them.
		open, stale, err := s.openOnly(ctx, r.list)
		if err != nil {
			return nil, core.Internal(op, err)
		}
		if err := s.dropStale(ctx, stale, func(id string) (string, string) {
			return s.k.runOpen(shard), runID + "\x00" + id
		}); err != nil {
			return nil, core.Internal(op, err)
		}
		ids = append(ids, open...)
	}
	return ids, nil
}

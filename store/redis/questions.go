package redis

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
)

// Create stores q as open, its asked event and its deliveries in one
// script.
func (s *Store) Create(ctx context.Context, q *core.Question, asked core.Event, out []core.Delivery) error {
	const op = "redis create"
	shard, ok := s.shardOf(q.ID)
	if !ok {
		return core.Errorf(core.CodeInvalid, op, "question id %q names no shard of this store", q.ID)
	}
	doc := *q
	doc.State = core.StateOpen
	doc.Answers, doc.Messages, doc.Resolution = nil, nil, nil
	docJSON, err := json.Marshal(&doc)
	if err != nil {
		return core.Internal(op, err)
	}
	askedJSON, err := renderEvent(asked)
	if err != nil {
		return core.Internal(op, err)
	}
	deadline := ""
	if !q.Deadline.IsZero() {
		deadline = msString(q.Deadline)
	}
	args := []any{
		shard, s.timed, surfaceList,
		q.ID, q.Run().Key(), docJSON, openMember(q), msString(q.CreatedAt), deadline,
		q.Renotified, len(q.PartIDs()), askedJSON, idemKey(q),
	}
	if args, err = appendDeliveries(op, args, out); err != nil {
		return err
	}
	keys := append([]string{
		s.k.question(q.ID), s.k.events(shard), s.k.seq(shard),
		s.k.open(shard), s.k.created(shard), s.k.deadline(shard), s.k.runOpen(shard), s.k.runs(shard),
		s.k.idempotency(shard),
	}, s.k.outboxes(shard)...)
	r, err := s.run(ctx, createScript, keys, args...)
	if err != nil {
		return core.Internal(op, err)
	}
	if r.code == codeDuplicate && len(r.list) == 1 {
		// The key was taken in the script, atomically; reading the first
		// question afterwards is only to hand it back.
		first, err := s.Get(ctx, r.list[0])
		if err != nil {
			return core.Internal(op, fmt.Errorf("the question %s holding the idempotency key: %w", r.list[0], err))
		}
		return &core.DuplicateError{Question: first}
	}
	_, err = s.outcome(op, q.ID, r)
	return err
}

// idemKey is the idempotency key Create passes its script, "" for none.
func idemKey(q *core.Question) string {
	if q.Idempotency == nil {
		return ""
	}
	return q.Idempotency.Key
}

// Get reads one question.
func (s *Store) Get(ctx context.Context, id string) (*core.Question, error) {
	const op = "redis get"
	if _, ok := s.shardOf(id); !ok {
		return nil, core.ErrNotFound
	}
	f, err := s.client.HGetAll(ctx, s.k.question(id)).Result()
	if err != nil {
		return nil, core.Internal(op, err)
	}
	if len(f) == 0 {
		return nil, core.ErrNotFound
	}
	q, err := decodeQuestion(f)
	if err != nil {
		return nil, core.Internal(op, err)
	}
	return q, nil
}

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
	args := make([]any, 0, 17+2*len(t.Items))
	args = append(args, sk.common[:]...)
	args = append(args,
		t.QuestionID, sk.wakeArg, now, msString(t.Now),
		state, resJSON, closeJSON, itemJSON, fp,
		voteKey, voteJSON, choice, t.Needed, len(t.Items))
	for _, a := range t.Items {
		b, err := json.Marshal(&a)
		if err != nil {
			return nil, core.Internal(op, err)
		}
		args = append(args, a.ItemID, b)
	}
	keys := make([]string, 0, 5+len(sk.outboxes))
	keys = append(keys, sk.questionPrefix+t.QuestionID, sk.events, sk.seq, sk.open, sk.closed)
	keys = append(keys, sk.outboxes...)
	r, err := s.run(ctx, resolveScript, keys, args...)
	if err != nil {
		return nil, core.Internal(op, err)
	}
	var q *core.Question
	if r.code == codeOK && r.n == 1 && read != nil && len(r.list) == 1 {
		q = applied(read, t.Items, core.State(r.list[0]), res)
	} else if q, err = s.outcome(op, t.QuestionID, r); err != nil {
		return nil, err
	}
	s.wake(t.QuestionID) // local waiters need not wait for the round trip through pub/sub
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
	keys := append([]string{
		s.k.question(rn.QuestionID), s.k.events(shard), s.k.seq(shard), s.k.deadline(shard),
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
	card, err := renderCard(id, ref)
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
		s.k.question(id), s.k.events(shard), s.k.seq(shard),
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

// openOnly splits ids into those of open questions and the rest (closed,
// or gone), keeping their order, with one pipelined read.
func (s *Store) openOnly(ctx context.Context, ids []string) (open, stale []string, err error) {
	if len(ids) == 0 {
		return nil, nil, nil
	}
	cmds := make([]*goredis.StringCmd, len(ids))
	_, err = s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGet(ctx, s.k.question(id), "state")
		}
		return nil
	})
	if err != nil && !errors.Is(err, goredis.Nil) {
		return nil, nil, err
	}
	for i, c := range cmds {
		if c.Val() == string(core.StateOpen) {
			open = append(open, ids[i])
		} else if c.Err() == nil || errors.Is(c.Err(), goredis.Nil) {
			stale = append(stale, ids[i])
		}
	}
	return open, stale, nil
}

// dropStale removes index members of questions that are closed or gone.
// A closed question never reopens, so removing its entry can race with
// nothing; member gives each id's index key and member.
func (s *Store) dropStale(ctx context.Context, ids []string, member func(id string) (key, m string)) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for _, id := range ids {
			k, m := member(id)
			p.ZRem(ctx, k, m)
		}
		return nil
	})
	return err
}

// ListOpen pages through the open index; the cursor is the last member
// returned, so ties in time never make a page skip or repeat.
func (s *Store) ListOpen(ctx context.Context, cursor string, limit int) ([]*core.Question, string, error) {
	const op = "redis list open"
	start := "-"
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil || !validOpenMember(string(b)) {
			return nil, "", core.Errorf(core.CodeInvalid, op, "bad cursor")
		}
		start = "(" + string(b)
	}
	count := int64(0) // no limit
	if limit > 0 {
		count = int64(limit) + 1 // one more tells whether there is a next page
	}
	cmds := make([]*goredis.StringSliceCmd, s.shards)
	_, err := s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for shard := range s.shards {
			cmds[shard] = p.ZRangeArgs(ctx, goredis.ZRangeArgs{Key: s.k.open(shard), Start: start, Stop: "+", ByLex: true, Count: count})
		}
		return nil
	})
	if err != nil {
		return nil, "", core.Internal(op, err)
	}
	var members []string
	for _, c := range cmds {
		members = append(members, c.Val()...)
	}
	slices.Sort(members)
	next := ""
	if limit > 0 && len(members) > limit {
		members = members[:limit]
		next = base64.RawURLEncoding.EncodeToString([]byte(members[limit-1]))
	}
	ids := make([]string, 0, len(members))
	for _, m := range members {
		if validOpenMember(m) {
			ids = append(ids, m[19:])
		}
	}
	qs, err := s.load(ctx, ids)
	if err != nil {
		return nil, "", core.Internal(op, err)
	}
	// A question closed since the index was read is no longer open.
	qs = slices.DeleteFunc(qs, func(q *core.Question) bool { return !q.Open() })
	return qs, next, nil
}

// Between lists questions by created or closed time in [from, to).
func (s *Store) Between(ctx context.Context, idx core.TimeIndex, from, to time.Time, limit int) ([]*core.Question, error) {
	const op = "redis between"
	if _, ok := s.k.index(0, idx); !ok {
		return nil, core.Errorf(core.CodeInvalid, op, "no time index %q", idx)
	}
	if !from.Before(to) {
		return nil, nil
	}
	ids, err := s.rangeByScore(ctx, func(shard int) string { k, _ := s.k.index(shard, idx); return k },
		msString(from), "("+msString(to), limit)
	if err != nil {
		return nil, core.Internal(op, err)
	}
	qs, err := s.load(ctx, ids)
	if err != nil {
		return nil, core.Internal(op, err)
	}
	return qs, nil
}

// dueRounds bounds how often one Due call drops closed questions' entries
// and reads again to fill its page.
const dueRounds = 8

// Due lists open questions whose deadline is at or before now. The
// deadline index keeps closed questions until they come due (a close does
// not pay for removing them), so Due drops the closed ones it meets and
// reads again until its page is open questions only.
func (s *Store) Due(ctx context.Context, now time.Time, limit int) ([]string, error) {
	const op = "redis due"
	for round := 1; ; round++ {
		ids, err := s.rangeByScore(ctx, s.k.deadline, "-inf", msString(now), limit)
		if err != nil {
			return nil, core.Internal(op, err)
		}
		open, stale, err := s.openOnly(ctx, ids)
		if err != nil {
			return nil, core.Internal(op, err)
		}
		if err := s.dropStale(ctx, stale, func(id string) (string, string) {
			sh, _ := s.shardOf(id)
			return s.k.deadline(sh), id
		}); err != nil {
			return nil, core.Internal(op, err)
		}
		if len(stale) == 0 || limit <= 0 || len(ids) < limit || round == dueRounds {
			return open, nil
		}
	}
}

// rangeByScore reads up to limit members (all for limit <= 0) of a score
// index from every shard and merges them by score, then id.
func (s *Store) rangeByScore(ctx context.Context, key func(shard int) string, lo, hi string, limit int) ([]string, error) {
	limit = max(limit, 0) // 0: no LIMIT
	cmds := make([]*goredis.ZSliceCmd, s.shards)
	_, err := s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for shard := range s.shards {
			cmds[shard] = p.ZRangeArgsWithScores(ctx, goredis.ZRangeArgs{Key: key(shard), Start: lo, Stop: hi, ByScore: true, Count: int64(limit)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var all []goredis.Z
	for _, c := range cmds {
		all = append(all, c.Val()...)
	}
	slices.SortFunc(all, func(a, b goredis.Z) int {
		if c := cmp.Compare(a.Score, b.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Member.(string), b.Member.(string))
	})
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	ids := make([]string, len(all))
	for i, z := range all {
		ids[i] = z.Member.(string)
	}
	return ids, nil
}

// load reads questions in the given order, skipping any that are gone.
func (s *Store) load(ctx context.Context, ids []string) ([]*core.Question, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	cmds := make([]*goredis.MapStringStringCmd, len(ids))
	_, err := s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, s.k.question(id))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	qs := make([]*core.Question, 0, len(ids))
	for _, c := range cmds {
		if len(c.Val()) == 0 {
			continue // purged meanwhile
		}
		q, err := decodeQuestion(c.Val())
		if err != nil {
			return nil, err
		}
		qs = append(qs, q)
	}
	return qs, nil
}

// purgeBatch bounds the questions (and loose events) one purge script
// drops, so no single script holds the server long.
const purgeBatch = 500

// Purge drops up to limit (all, for limit <= 0) questions closed before
// cutoff, with their events, shard by shard, in batches. Candidates are
// read first and checked again inside the script, so a purge never drops
// what it should not.
func (s *Store) Purge(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	const op = "redis purge"
	total := 0
	for shard := range s.shards {
		for {
			want := purgeBatch
			if limit > 0 {
				if total >= limit {
					return total, nil
				}
				want = min(want, limit-total)
			}
			ids, err := s.client.ZRangeArgs(ctx, goredis.ZRangeArgs{
				Key: s.k.closed(shard), Start: "-inf", Stop: "(" + msString(cutoff), ByScore: true, Count: int64(want),
			}).Result()
			if err != nil {
				return total, core.Internal(op, err)
			}
			keys := []string{s.k.closed(shard), s.k.created(shard), s.k.events(shard), s.k.loose(shard), s.k.idempotency(shard),
				s.k.deadline(shard), s.k.runOpen(shard)}
			args := []any{msString(cutoff), purgeBatch}
			for _, id := range ids {
				if sh, ok := s.shardOf(id); !ok || sh != shard {
					continue
				}
				keys = append(keys, s.k.question(id), s.k.questionEvents(id))
				args = append(args, id)
			}
			r, err := s.run(ctx, purgeScript, keys, args...)
			if err != nil {
				return total, core.Internal(op, err)
			}
			total += int(r.n)
			loose := 0
			if len(r.list) > 0 {
				loose, _ = strconv.Atoi(r.list[0])
			}
			// Done with the shard when a batch came up short; a batch
			// whose candidates were all taken meanwhile is done too.
			if (len(ids) < want || r.n == 0) && loose < purgeBatch {
				break
			}
		}
		if err := s.purgeRuns(ctx, shard, cutoff); err != nil {
			return total, core.Internal(op, err)
		}
	}
	return total, nil
}

// purgeRuns drops the markers of runs that ended before cutoff (law 9):
// after the retention period an ask into such a run is no longer refused.
// A marker never changes once set (the first end wins), so what the scan
// read is what is dropped.
func (s *Store) purgeRuns(ctx context.Context, shard int, cutoff time.Time) error {
	key := s.k.runs(shard)
	end := cutoff.UnixMilli()
	var cursor uint64
	for {
		kvs, next, err := s.client.HScan(ctx, key, cursor, "", 500).Result()
		if err != nil {
			return err
		}
		var old []string
		for i := 0; i+1 < len(kvs); i += 2 {
			if ms, err := strconv.ParseInt(kvs[i+1], 10, 64); err == nil && ms < end {
				old = append(old, kvs[i])
			}
		}
		if len(old) > 0 {
			if err := s.client.HDel(ctx, key, old...).Err(); err != nil {
				return err
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// appendDeliveries adds deliveries to a script's ARGV as surface, JSON
// pairs, preceded by their count.
func appendDeliveries(op string, args []any, out []core.Delivery) ([]any, error) {
	args = append(args, len(out))
	for _, d := range out {
		if !d.Surface.IsChat() {
			return nil, core.Errorf(core.CodeInvalid, op, "deliveries go to chat surfaces, not %q", d.Surface)
		}
		b, err := json.Marshal(&d)
		if err != nil {
			return nil, core.Internal(op, err)
		}
		args = append(args, string(d.Surface), b)
	}
	return args, nil
}

// renderEvent renders an event for a script; an event without a kind is
// "" (none). The store assigns Seq, so the one given is dropped.
func renderEvent(e core.Event) (string, error) {
	if e.Kind == "" {
		return "", nil
	}
	e.Seq = 0
	b, err := json.Marshal(&e)
	return string(b), err
}

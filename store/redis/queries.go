package redis

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
)

// openOnly splits ids into those of open questions and the rest (closed,
// or gone), keeping their order, with one pipelined read.
func (s *Store) openOnly(ctx context.Context, ids []core.QuestionID) (open, stale []core.QuestionID, err error) {
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
	// The pipeline's error is its first command's: a gone question's Nil
	// there hides another's failure, which would leave that question out
	// of both lists unsaid.
	for i, c := range cmds {
		switch err := c.Err(); {
		case err != nil && !errors.Is(err, goredis.Nil):
			return nil, nil, err
		case c.Val() == string(core.StateOpen):
			open = append(open, ids[i])
		default:
			stale = append(stale, ids[i])
		}
	}
	return open, stale, nil
}

// dropStale removes index members of questions that are closed or gone.
// A closed question never reopens, so removing its entry can race with
// nothing; member gives each one's index key and member (items are
// question ids, or the index members themselves).
func dropStale[T any](ctx context.Context, s *Store, items []T, member func(T) (key, m string)) error {
	if len(items) == 0 {
		return nil
	}
	_, err := s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for _, it := range items {
			k, m := member(it)
			p.ZRem(ctx, k, m)
		}
		return nil
	})
	return err
}

// dropOpenMembers removes open index members (openMember) of questions
// that are closed or gone: a close leaves its member to the readers of
// the index (resolve.lua). A closed question never reopens, so this can
// race with nothing.
func (s *Store) dropOpenMembers(ctx context.Context, members []string) error {
	return dropStale(ctx, s, members, func(m string) (string, string) {
		sh, _ := s.shardOf(openMemberID(m))
		return s.k.open(sh), m
	})
}

// listRounds bounds how often one ListOpen call drops closed questions'
// members and reads again to fill its page.
const listRounds = 8

// ListOpen pages through the open index; the cursor is the last member
// returned, so ties in time never make a page skip or repeat. The index
// keeps closed questions' members until a reader meets them (a close does
// not pay for removing them), so ListOpen drops those it meets and reads
// again until its page is open questions only.
func (s *Store) ListOpen(ctx context.Context, cursor string, limit int) ([]*core.Question, string, error) {
	const op = "redis list open"
	for round := 1; ; round++ {
		qs, next, stale, err := s.listOpen(ctx, cursor, limit)
		if err != nil {
			return nil, "", err
		}
		if err := s.dropOpenMembers(ctx, stale); err != nil {
			return nil, "", core.Internal(op, err)
		}
		if len(stale) == 0 || limit <= 0 || next == "" || round == listRounds {
			return qs, next, nil
		}
	}
}

// listOpen is one read of ListOpen's: the page, its next cursor and the
// members it met of questions no longer open.
func (s *Store) listOpen(ctx context.Context, cursor string, limit int) ([]*core.Question, string, []string, error) {
	const op = "redis list open"
	start := "-"
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil || !validOpenMember(string(b)) {
			return nil, "", nil, core.Errorf(core.CodeInvalid, op, "bad cursor")
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
		return nil, "", nil, core.Internal(op, err)
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
	ids := make([]core.QuestionID, 0, len(members))
	for _, m := range members {
		if validOpenMember(m) {
			members[len(ids)] = m
			ids = append(ids, openMemberID(m))
		}
	}
	members = members[:len(ids)]
	qs, err := s.load(ctx, ids)
	if err != nil {
		return nil, "", nil, core.Internal(op, err)
	}
	// load keeps the order and skips what is gone.
	var stale []string
	open := qs[:0]
	for i, j := 0, 0; i < len(ids); i++ {
		if j < len(qs) && qs[j].ID == ids[i] {
			if qs[j].Open() {
				open = append(open, qs[j])
			} else {
				stale = append(stale, members[i])
			}
			j++
			continue
		}
		stale = append(stale, members[i])
	}
	return open, next, stale, nil
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
	if idx == core.ByClosed {
		if err := s.catchUpClosed(ctx); err != nil {
			return nil, core.Internal(op, err)
		}
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
func (s *Store) Due(ctx context.Context, now time.Time, limit int) ([]core.QuestionID, error) {
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
		if err := dropStale(ctx, s, stale, func(id core.QuestionID) (string, string) {
			sh, _ := s.shardOf(id)
			return s.k.deadline(sh), string(id)
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
func (s *Store) rangeByScore(ctx context.Context, key func(shard int) string, lo, hi string, limit int) ([]core.QuestionID, error) {
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
	ids := make([]core.QuestionID, len(all))
	for i, z := range all {
		ids[i] = core.QuestionID(z.Member.(string))
	}
	return ids, nil
}

// loadOne reads question id with the read script, through the
// autopipeliner ap (nil: the client), so that its keys are read at one
// moment; nil if it is gone. A closed question whose resolution is on
// another node than its hash (its slot half moved) is a failover's
// error: try again.
func (s *Store) loadOne(ctx context.Context, ap *goredis.AutoPipeliner, id core.QuestionID) ([]*core.Question, error) {
	qkey, dkey, rkey := s.k.question(id), s.k.document(id), s.k.resolution(id)
	if scriptHook != nil {
		// rkey is an argument, but the script reads it: it too must
		// share the slot.
		scriptHook(readScript.name, []string{qkey, dkey, rkey})
	}
	v, err := s.runScript(ctx, ap, readScript, append(scriptArgs(2, 1), qkey, dkey, rkey))
	if err != nil {
		if strings.Contains(err.Error(), "non local key in a cluster node script") {
			// The resolution, read undeclared (read.lua), has gone over
			// to another node ahead of the hash: the slot is moving.
			return nil, markErr(err)
		}
		return nil, err
	}
	r, err := parseReply(readScript.name, v)
	if err != nil || len(r.fields) == 0 {
		return nil, err
	}
	if _, ok := r.fields["res"]; !ok && r.fields["state"] != string(core.StateOpen) {
		// Closed, with no resolution where the hash is: the slot is
		// moving, and the hash has gone over to another node ahead of it.
		return nil, markErr(fmt.Errorf("question %s: closed, its resolution not yet beside it (its slot is moving)", id))
	}
	q, err := decodeQuestion(id, r.fields)
	if err != nil {
		return nil, err
	}
	return []*core.Question{q}, nil
}

// load reads questions in the given order, skipping any that are gone.
func (s *Store) load(ctx context.Context, ids []core.QuestionID) ([]*core.Question, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	ap := s.hotStart()
	defer s.hotEnd()
	if ap != nil && len(ids) == 1 {
		return s.loadOne(ctx, ap, ids[0])
	}
	// A question's hash, its document and its resolution, in one round
	// trip for all of them. Each is a command of its own, not one MGET of
	// the two: while a cluster moves the slot, Redis refuses a command of
	// several keys when one is not there (TRYAGAIN), and an open question
	// has no resolution; a single key's read follows the move (ASK).
	cmds := make([]struct {
		hash     *goredis.MapStringStringCmd
		doc, res *goredis.StringCmd
	}, len(ids))
	_, err := s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i, id := range ids {
			cmds[i].hash = p.HGetAll(ctx, s.k.question(id))
			cmds[i].doc = p.Get(ctx, s.k.document(id))
			cmds[i].res = p.Get(ctx, s.k.resolution(id))
		}
		return nil
	})
	if err != nil && !errors.Is(err, goredis.Nil) {
		return nil, err
	}
	qs := make([]*core.Question, 0, len(ids))
	for i, c := range cmds {
		f, err := c.hash.Result()
		if err != nil {
			return nil, err
		}
		if len(f) == 0 {
			continue // purged meanwhile
		}
		doc, docFound, err := found(c.doc)
		if err != nil {
			return nil, fmt.Errorf("question %s document: %w", ids[i], err)
		}
		res, resFound, err := found(c.res)
		if err != nil {
			return nil, fmt.Errorf("question %s resolution: %w", ids[i], err)
		}
		if !docFound || resFound == (f["state"] == string(core.StateOpen)) {
			// Another client's purge or close ran between this one's
			// reads (Redis serves a pipeline longer than it reads at once
			// in parts): a document gone, an open question with a
			// resolution, a closed one without. Read it again, at one
			// moment.
			again, err := s.loadOne(ctx, ap, ids[i])
			if err != nil {
				return nil, err
			}
			qs = append(qs, again...)
			continue
		}
		q, err := decodeQuestion(ids[i], withParts(f, doc, docFound, res, resFound))
		if err != nil {
			return nil, err
		}
		qs = append(qs, q)
	}
	return qs, nil
}

// found is a GET's value and whether the key was there.
func found(c *goredis.StringCmd) (string, bool, error) {
	v, err := c.Result()
	if errors.Is(err, goredis.Nil) {
		return "", false, nil
	}
	return v, err == nil, err
}

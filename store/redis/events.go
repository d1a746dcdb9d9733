package redis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
)

// Append adds an event that goes with no state change. An event of a
// question this store holds lands in that question's shard and is purged
// with it; any other lands in shard 0 and is purged by its time.
func (s *Store) Append(ctx context.Context, e core.Event) (core.Event, error) {
	const op = "redis append"
	if e.Kind == "" {
		return e, core.Errorf(core.CodeInvalid, op, "an event needs a kind")
	}
	shard, ok := s.shardOf(e.QuestionID)
	qkey := s.k.tag(0) + ":q:" // never exists: the id is empty
	if ok {
		qkey = s.k.question(e.QuestionID)
	} else {
		shard = 0
	}
	ev, err := s.renderEvent(e, shard)
	if err != nil {
		return e, core.Internal(op, err)
	}
	r, err := s.run(ctx, appendScript,
		[]string{s.k.events(shard), s.k.seq(shard), qkey, s.k.loose(shard), s.k.appended(shard, s.attempt())},
		append(ev.args([]any{shard, s.clockArg(), ""}), msString(e.At))...)
	if err != nil {
		return e, core.Internal(op, err)
	}
	e.Seq = s.seq(r.n, shard)
	return e, nil
}

// Events reads events with Seq > since (all of them for limit <= 0) from
// every shard's stream and merges them by Seq. Event numbers follow a
// clock (Store.clockArg): with one shard the stream's order is Seq's and
// the read is exact. With several, each follows its shard's server
// clock, and one shard's can run ahead of another's (a cluster node's
// fast clock, a burst past the clock): a reader paging
// by Seq that took an event of the fast shard would move past an event
// the slow shard appends just after, with a lower Seq, and never see it.
// So each shard's read is preceded, in the same pipeline and so on the
// same node before it, by its mark (event_mark.lua): the lowest number
// it can still give. Only events below every shard's mark are handed
// out; the rest wait for a later read, which they reach once every
// shard's clock has passed them. (A node's clock stepping back could
// still number an event below an earlier mark.)
func (s *Store) Events(ctx context.Context, since int64, limit int) ([]core.Event, error) {
	const op = "redis events"
	cmds := make([]*goredis.XMessageSliceCmd, s.shards)
	var marks []*goredis.Cmd
	if s.shards > 1 {
		marks = make([]*goredis.Cmd, s.shards)
	}
	_, err := s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for shard := range s.shards {
			if marks != nil {
				marks[shard] = p.Do(ctx, eventMarkScript.eval[0], eventMarkScript.eval[1], 1, s.k.seq(shard))
			}
			if limit > 0 {
				cmds[shard] = p.XRangeN(ctx, s.k.events(shard), s.eventStart(since, shard), "+", int64(limit))
			} else {
				cmds[shard] = p.XRange(ctx, s.k.events(shard), s.eventStart(since, shard), "+")
			}
		}
		return nil
	})
	if err != nil {
		return nil, core.Internal(op, err)
	}
	below := int64(math.MaxInt64)
	for shard, m := range marks {
		r, err := parseReply(eventMarkScript.name, m.Val())
		if err != nil {
			return nil, core.Internal(op, err)
		}
		below = min(below, s.seq(r.n, shard))
	}
	var out []core.Event
	for shard, c := range cmds {
		for _, m := range c.Val() {
			e, err := s.decodeEvent(m, shard)
			if err != nil {
				return nil, core.Internal(op, err)
			}
			if e.Seq < below {
				out = append(out, e)
			}
		}
	}
	slices.SortFunc(out, func(a, b core.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// eventStart is the exclusive XRANGE start of a shard's events with
// Seq > since. A shard's stream ids are "<n>-<shard>" with
// Seq = n*shards + shard, so Seq > since exactly when
// n > floor((since-shard)/shards).
func (s *Store) eventStart(since int64, shard int) string {
	d := since - int64(shard)
	n := d / int64(s.shards)
	if d%int64(s.shards) != 0 && d < 0 {
		n-- // floor, not truncation
	}
	if n < 0 {
		return "-"
	}
	return "(" + strconv.FormatInt(n, 10) + "-" + strconv.Itoa(shard)
}

func (s *Store) decodeEvent(m goredis.XMessage, shard int) (core.Event, error) {
	raw, _ := m.Values["e"].(string)
	e, err := readEvent(raw)
	if err != nil {
		return e, fmt.Errorf("event %s: %w", m.ID, err)
	}
	head, _, _ := strings.Cut(m.ID, "-")
	n, err := strconv.ParseInt(head, 10, 64)
	if err != nil {
		return e, fmt.Errorf("event id %s: %w", m.ID, err)
	}
	e.Seq = s.seq(n, shard)
	e.Chain = chainOf(m, shard, n)
	return e, nil
}

// QuestionEvents reads one question's events: the stream ids its record
// keeps (the "ev" field), then those entries of its shard's stream.
func (s *Store) QuestionEvents(ctx context.Context, id core.QuestionID, limit int) ([]core.Event, error) {
	const op = "redis question events"
	shard, ok := s.shardOf(id)
	if !ok || !core.ValidID(id) {
		return nil, nil // no stored question has such an id
	}
	field, err := s.client.HGet(ctx, s.k.question(id), "ev").Result()
	if err != nil && !errors.Is(err, goredis.Nil) {
		return nil, core.Internal(op, err)
	}
	ids := firstEventIDs(strings.Fields(field), limit)
	cmds := make([]*goredis.XMessageSliceCmd, len(ids))
	_, err = s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i, sid := range ids {
			cmds[i] = p.XRange(ctx, s.k.events(shard), sid, sid)
		}
		return nil
	})
	if err != nil {
		return nil, core.Internal(op, err)
	}
	// firstEventIDs put the ids in Seq's order, each once, and no more
	// than limit: the entries read are the answer as they come.
	out := make([]core.Event, 0, len(ids))
	for _, c := range cmds {
		for _, m := range c.Val() {
			e, err := s.decodeEvent(m, shard)
			if err != nil {
				return nil, core.Internal(op, err)
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// firstEventIDs are the first limit of a question's event ids (its "ev"
// field: "<n>-<shard>", all of one shard), each once, in their order on
// the stream, which is Seq's; all of them for limit <= 0. Only those are
// read, so a page of a long history does not fetch the whole of it.
func firstEventIDs(ids []string, limit int) []string {
	num := func(id string) uint64 {
		n, _, _ := strings.Cut(id, "-")
		v, _ := strconv.ParseUint(n, 10, 64)
		return v
	}
	slices.SortFunc(ids, func(a, b string) int { return cmp.Compare(num(a), num(b)) })
	ids = slices.Compact(ids)
	if limit > 0 && len(ids) > limit {
		ids = ids[:limit]
	}
	return ids
}

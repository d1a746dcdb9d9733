package redis

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
)

// searchBatch is how many entries of the closed index a search reads
// from every shard per round trip, before it loads and filters them.
const searchBatch = 200

// closedPos is a place in the closed index read newest first: entries
// strictly before it, by (closed ms, id) from the top, come next. top is
// the very start, above every entry.
type closedPos struct {
	ms  int64
	id  string
	top bool
}

func (p closedPos) encode() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(p.ms, 10) + "|" + p.id))
}

func decodeClosedPos(cursor string) (closedPos, bool) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return closedPos{}, false
	}
	ms, id, ok := strings.Cut(string(b), "|")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || len(id) > core.MaxIDLen+1 {
		return closedPos{}, false
	}
	return closedPos{ms: n, id: id}, true
}

// closedEntry is one member of a shard's closed index.
type closedEntry struct {
	ms int64
	id core.QuestionID
}

// SearchClosed reads the shards' closed indexes newest first, merged, a
// batch at a time, loads each batch's questions in one pipelined read and
// keeps those cq matches: a bounded scan with the filtering done here, on
// the server side of the store, since Redis holds no secondary index per
// filter. It reads at most scan entries per call; a rare match in a long
// history then pages on with Next rather than holding one request for the
// whole index. On a cluster each shard's index lives on the node of its
// hash tag, and the pipeline sends each its own reads, as ListOpen does.
func (s *Store) SearchClosed(ctx context.Context, cq core.ClosedQuery, cursor string, limit, scan int) (core.ClosedPage, error) {
	const op = "redis search closed"
	pos := closedPos{top: true}
	switch {
	case cursor != "":
		p, ok := decodeClosedPos(cursor)
		if !ok {
			return core.ClosedPage{}, core.Errorf(core.CodeInvalid, op, "cursor %q is not one this store made", cursor)
		}
		pos = p
	case !cq.To.IsZero():
		pos = closedPos{ms: cq.To.UnixMilli()} // id "": nothing at To itself
	}
	if err := s.catchUpClosed(ctx); err != nil {
		return core.ClosedPage{}, core.Internal(op, err)
	}
	floor := "-inf"
	if !cq.From.IsZero() {
		floor = msString(cq.From)
	}
	var page core.ClosedPage
	read := 0
	for {
		n := searchBatch
		if scan > 0 {
			n = min(n, scan-read+1) // one more tells whether the scan stopped short
		}
		entries, err := s.closedBefore(ctx, pos, floor, n)
		if err != nil {
			return core.ClosedPage{}, core.Internal(op, err)
		}
		ids := make([]core.QuestionID, len(entries))
		for i, e := range entries {
			ids[i] = e.id
		}
		qs, err := s.load(ctx, ids)
		if err != nil {
			return core.ClosedPage{}, core.Internal(op, err)
		}
		byID := make(map[core.QuestionID]*core.Question, len(qs))
		for _, q := range qs {
			byID[q.ID] = q
		}
		for _, e := range entries {
			if (limit > 0 && len(page.Questions) == limit) || (scan > 0 && read == scan) {
				// Resume at e itself: its id with a NUL after it is
				// the least place above it.
				page.Next = closedPos{ms: e.ms, id: string(e.id) + "\x00"}.encode()
				page.ReadTo = fromMS(e.ms)
				return page, nil
			}
			read++
			pos = closedPos{ms: e.ms, id: string(e.id)}
			// A question purged since the index was read is gone.
			if q := byID[e.id]; q != nil && cq.Match(q) {
				page.Questions = append(page.Questions, q)
			}
		}
		if len(entries) < n {
			return page, nil
		}
	}
}

// closedBefore reads up to n entries before pos and at or above floor
// from every shard and merges them newest first. Entries of pos's own
// millisecond are read apart, whole, and those at or after pos's id
// dropped: a score range alone cannot start within one millisecond.
func (s *Store) closedBefore(ctx context.Context, pos closedPos, floor string, n int) ([]closedEntry, error) {
	top := "+inf"
	if !pos.top {
		top = "(" + strconv.FormatInt(pos.ms, 10)
	}
	ties := make([]*goredis.StringSliceCmd, s.shards)
	rest := make([]*goredis.ZSliceCmd, s.shards)
	_, err := s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for shard := range s.shards {
			key := s.k.closed(shard)
			if !pos.top && pos.id != "" {
				ms := strconv.FormatInt(pos.ms, 10)
				ties[shard] = p.ZRangeArgs(ctx, goredis.ZRangeArgs{Key: key, Start: ms, Stop: ms, ByScore: true, Rev: true})
			}
			rest[shard] = p.ZRangeArgsWithScores(ctx, goredis.ZRangeArgs{Key: key, Start: top, Stop: floor, ByScore: true, Rev: true, Count: int64(n)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var all []closedEntry
	for shard := range s.shards {
		if ties[shard] != nil {
			for _, id := range ties[shard].Val() {
				if id < pos.id {
					all = append(all, closedEntry{ms: pos.ms, id: core.QuestionID(id)})
				}
			}
		}
		for _, z := range rest[shard].Val() {
			all = append(all, closedEntry{ms: int64(z.Score), id: core.QuestionID(z.Member.(string))})
		}
	}
	slices.SortFunc(all, func(a, b closedEntry) int {
		if c := cmp.Compare(b.ms, a.ms); c != 0 {
			return c
		}
		return cmp.Compare(b.id, a.id)
	})
	if len(all) > n {
		all = all[:n]
	}
	return all, nil
}

// catchUpBatch is how many events one catch-up script reads.
const catchUpBatch = 1000

// catchUpClosed brings every shard's closed index up to date from the
// closes marked on the event stream since the last catch-up
// (closed_catchup.lua), all shards at once in a round trip, again while
// a shard had more to read. A close leaves its question out of the index
// so that it costs one ZADD less; its readers pay here instead, once per
// close over all replicas.
func (s *Store) catchUpClosed(ctx context.Context) error {
	pending := make([]int, s.shards)
	for shard := range s.shards {
		pending[shard] = shard
	}
	for len(pending) > 0 {
		cmds := make([]*goredis.Cmd, len(pending))
		_, err := s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for i, shard := range pending {
				sk := s.shardKeys(shard)
				keys := []string{sk.events, sk.closed, s.k.closedCursor(shard)}
				if scriptHook != nil {
					scriptHook(closedCatchUpScript.name, keys)
				}
				cmds[i] = p.EvalSha(ctx, closedCatchUpScript.Hash(), keys, catchUpBatch)
			}
			return nil
		})
		if goredis.HasErrorPrefix(err, "NOSCRIPT") {
			for _, shard := range pending {
				sk := s.shardKeys(shard)
				if _, err := s.run(ctx, closedCatchUpScript, []string{sk.events, sk.closed, s.k.closedCursor(shard)}, catchUpBatch); err != nil {
					return err
				}
			}
			continue // loaded now; go round again to read on
		}
		if err != nil {
			return fmt.Errorf("closed index catch-up: %w", err)
		}
		var more []int
		for i, c := range cmds {
			r, err := parseReply(closedCatchUpScript.name, c.Val())
			if err != nil {
				return err
			}
			if r.n == catchUpBatch {
				more = append(more, pending[i])
			}
		}
		pending = more
	}
	return nil
}

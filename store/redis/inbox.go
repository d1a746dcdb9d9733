package redis

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
)

// openPageChunk is how many questions OpenPage reads in one round trip.
const openPageChunk = 500

// OpenPage reads every shard's open index, merged in ListOpen's order,
// and the questions behind it a chunk at a time, so the total counts
// every match. The cursor is the last member listed, as ListOpen's is.
func (s *Store) OpenPage(ctx context.Context, f core.OpenFilter, cursor string, limit int) (core.OpenPage, error) {
	const op = "redis open page"
	after := ""
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil || !validOpenMember(string(b)) {
			return core.OpenPage{}, core.Errorf(core.CodeInvalid, op, "bad cursor")
		}
		after = string(b)
	}
	cmds := make([]*goredis.StringSliceCmd, s.shards)
	_, err := s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for shard := range s.shards {
			cmds[shard] = p.ZRangeArgs(ctx, goredis.ZRangeArgs{Key: s.k.open(shard), Start: "-", Stop: "+", ByLex: true})
		}
		return nil
	})
	if err != nil {
		return core.OpenPage{}, core.Internal(op, err)
	}
	var members []string
	for _, c := range cmds {
		for _, m := range c.Val() {
			if validOpenMember(m) {
				members = append(members, m)
			}
		}
	}
	slices.Sort(members)
	if f.All() {
		return s.openPageAll(ctx, members, after, limit)
	}
	var page core.OpenPage
	last := ""
	for chunk := range slices.Chunk(members, openPageChunk) {
		ids := openMemberIDs(chunk)
		qs, err := s.load(ctx, ids)
		if err != nil {
			return core.OpenPage{}, core.Internal(op, err)
		}
		byID := make(map[core.QuestionID]*core.Question, len(qs))
		for _, q := range qs {
			byID[q.ID] = q
		}
		var stale []string
		for i, m := range chunk {
			q := byID[ids[i]]
			// A close leaves its member to the readers of the index.
			if q == nil || !q.Open() {
				stale = append(stale, m)
				continue
			}
			if !f.Match(q) {
				continue
			}
			page.Total++
			switch {
			case after != "" && m <= after:
			case limit > 0 && len(page.Questions) == limit:
				if page.Next == "" {
					page.Next = base64.RawURLEncoding.EncodeToString([]byte(last))
				}
			default:
				page.Questions, last = append(page.Questions, q), m
			}
		}
		if err := s.dropOpenMembers(ctx, stale); err != nil {
			return core.OpenPage{}, core.Internal(op, err)
		}
	}
	return page, nil
}

// openPageAll is OpenPage with no filter: it reads only the state of each
// member's question, to leave out (and drop) those closed since, and
// then only the questions on the page. A question that closes between the
// two reads is left off the page, as if it had closed before.
func (s *Store) openPageAll(ctx context.Context, members []string, after string, limit int) (core.OpenPage, error) {
	const op = "redis open page"
	open := members[:0:0]
	for chunk := range slices.Chunk(members, openPageChunk) {
		states := make([]*goredis.StringCmd, len(chunk))
		_, err := s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for i, m := range chunk {
				states[i] = p.HGet(ctx, s.k.question(openMemberID(m)), "state")
			}
			return nil
		})
		if err != nil && !errors.Is(err, goredis.Nil) {
			return core.OpenPage{}, core.Internal(op, err)
		}
		var stale []string
		for i, m := range chunk {
			state, err := states[i].Result()
			switch {
			case err != nil && !errors.Is(err, goredis.Nil):
				return core.OpenPage{}, core.Internal(op, err)
			case state == string(core.StateOpen):
				open = append(open, m)
			default: // closed, or gone: a close leaves its member to the readers of the index
				stale = append(stale, m)
			}
		}
		if err := s.dropOpenMembers(ctx, stale); err != nil {
			return core.OpenPage{}, core.Internal(op, err)
		}
	}
	page := core.OpenPage{Total: len(open)}
	from, _ := slices.BinarySearch(open, after)
	if from < len(open) && open[from] == after {
		from++
	}
	on := open[from:]
	if limit > 0 && len(on) > limit {
		on = on[:limit]
		page.Next = base64.RawURLEncoding.EncodeToString([]byte(on[limit-1]))
	}
	qs, err := s.load(ctx, openMemberIDs(on))
	if err != nil {
		return core.OpenPage{}, core.Internal(op, err)
	}
	for _, q := range qs {
		if q.Open() {
			page.Questions = append(page.Questions, q)
		}
	}
	return page, nil
}

// openMemberIDs are the question ids of open index members.
func openMemberIDs(members []string) []core.QuestionID {
	ids := make([]core.QuestionID, len(members))
	for i, m := range members {
		ids[i] = openMemberID(m)
	}
	return ids
}

package redis

import (
	"context"
	"encoding/base64"
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
	var page core.OpenPage
	last := ""
	for chunk := range slices.Chunk(members, openPageChunk) {
		ids := make([]core.QuestionID, len(chunk))
		for i, m := range chunk {
			ids[i] = openMemberID(m)
		}
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

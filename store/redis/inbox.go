package redis

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
)

// openPageChunk is how many open index members OpenPage looks up in one
// round trip.
const openPageChunk = 500

// OpenPage reads every shard's open index, merged in ListOpen's order;
// then, a chunk at a time, the state of each member's question, to leave
// out (and drop) those closed since, and, under a filter, what it
// matches from the question's document (openDoc); then only the
// questions on the page, whole. So the total counts every match, and no
// question off the page is read whole. A question that closes between
// the two reads is left off the page, as if it had closed before. The
// cursor is the last member listed, as ListOpen's is.
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
	var matching []string
	for chunk := range slices.Chunk(members, openPageChunk) {
		if matching, err = s.openMatching(ctx, chunk, f, matching); err != nil {
			return core.OpenPage{}, core.Internal(op, err)
		}
	}
	page := core.OpenPage{Total: len(matching)}
	from, _ := slices.BinarySearch(matching, after)
	if from < len(matching) && matching[from] == after {
		from++
	}
	on := matching[from:]
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

// openDoc is what an inbox filter matches (core.OpenFields), read from a
// question's document.
type openDoc struct {
	Route         string             `json:"route"`
	Kind          core.Kind          `json:"kind"`
	Agent         core.AgentID       `json:"agent"`
	Labels        core.Labels        `json:"labels"`
	Reversibility core.Reversibility `json:"reversibility"`
}

// openMatching appends to matching the members of chunk whose questions
// are open and pass f, in order, and drops the members of those closed
// or gone from the index.
func (s *Store) openMatching(ctx context.Context, chunk []string, f core.OpenFilter, matching []string) ([]string, error) {
	states := make([]*goredis.StringCmd, len(chunk))
	var docs []*goredis.StringCmd // under a filter
	if !f.All() {
		docs = make([]*goredis.StringCmd, len(chunk))
	}
	_, err := s.client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for i, m := range chunk {
			id := openMemberID(m)
			states[i] = p.HGet(ctx, s.k.question(id), "state")
			if docs != nil {
				docs[i] = p.Get(ctx, s.k.document(id))
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, goredis.Nil) {
		return nil, err
	}
	var stale []string
	for i, m := range chunk {
		state, err := states[i].Result()
		switch {
		case err != nil && !errors.Is(err, goredis.Nil):
			return nil, err
		case state != string(core.StateOpen): // closed, or gone: a close leaves its member to the readers of the index
			stale = append(stale, m)
			continue
		case f.All():
			matching = append(matching, m)
			continue
		}
		doc, err := docs[i].Bytes()
		if err != nil {
			return nil, fmt.Errorf("the document of open question %s: %w", openMemberID(m), err)
		}
		var d openDoc
		if err := json.Unmarshal(doc, &d); err != nil {
			return nil, fmt.Errorf("the document of open question %s: %w", openMemberID(m), err)
		}
		if f.MatchFields(core.OpenFields{Route: d.Route, Kind: d.Kind, Agent: d.Agent, Project: d.Labels.Project, Reversibility: d.Reversibility}) {
			matching = append(matching, m)
		}
	}
	return matching, s.dropOpenMembers(ctx, stale)
}

// openMemberIDs are the question ids of open index members.
func openMemberIDs(members []string) []core.QuestionID {
	ids := make([]core.QuestionID, len(members))
	for i, m := range members {
		ids[i] = openMemberID(m)
	}
	return ids
}

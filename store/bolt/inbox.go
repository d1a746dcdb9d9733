package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// OpenPage walks the open index once, in one read transaction, so the
// page and its total are of the same moment. The cursor is the last key
// listed, as ListOpen's is: a question closed since keeps no page from
// starting right after it.
func (s *Store) OpenPage(_ context.Context, f core.OpenFilter, cursor string, limit int) (core.OpenPage, error) {
	const op = "open page"
	var after []byte
	if cursor != "" {
		var err error
		after, err = cursorEncoding.DecodeString(cursor)
		if err != nil || len(after) < 9 {
			return core.OpenPage{}, core.Errorf(core.CodeInvalid, op, "cursor %q is not one this store made", cursor)
		}
	}
	var p core.OpenPage
	err := s.view(op, func(tx *bbolt.Tx) error {
		p = core.OpenPage{}
		// Every key of the open index is an open question, and its value
		// says what a filter matches (openEntry), so only the questions
		// on the page are read whole.
		var last []byte
		c := tx.Bucket(bucketOpen).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if !f.All() {
				ok, err := openMatch(tx, f, k, v)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
			}
			p.Total++
			before := after != nil && bytes.Compare(k, after) <= 0
			full := limit > 0 && len(p.Questions) == limit
			switch {
			case !before && !full:
				q, err := getQuestion(tx, idOfOpenKey(k))
				if err != nil {
					return err
				}
				p.Questions, last = append(p.Questions, q), bytes.Clone(k)
			case full && !before && p.Next == "":
				p.Next = cursorEncoding.EncodeToString(last)
			}
		}
		return nil
	})
	return p, err
}

// openEntry is the value of a question's key in the open index: what an
// inbox filter matches (core.OpenFields), so a filtered page reads these
// rather than every question. Entries written before it existed are
// empty, and their questions are read whole instead.
type openEntry struct {
	Route   string             `json:"r,omitempty"`
	Kind    core.Kind          `json:"k,omitempty"`
	Agent   core.AgentID       `json:"a,omitempty"`
	Project string             `json:"p,omitempty"`
	Rev     core.Reversibility `json:"v,omitempty"`
}

func openEntryOf(q *core.Question) openEntry {
	o := q.OpenFields()
	return openEntry{Route: o.Route, Kind: o.Kind, Agent: o.Agent, Project: o.Project, Rev: o.Reversibility}
}

func (e openEntry) fields() core.OpenFields {
	return core.OpenFields{Route: e.Route, Kind: e.Kind, Agent: e.Agent, Project: e.Project, Reversibility: e.Rev}
}

// openMatch reports whether the open question at key k, whose open index
// value is v, passes f: from v, or, for an entry written before values
// were (empty), from the question itself.
func openMatch(tx *bbolt.Tx, f core.OpenFilter, k, v []byte) (bool, error) {
	if len(v) > 0 {
		var e openEntry
		if err := json.Unmarshal(v, &e); err != nil {
			return false, fmt.Errorf("decode open index entry: %w", err)
		}
		return f.MatchFields(e.fields()), nil
	}
	q, err := getQuestion(tx, idOfOpenKey(k))
	if err != nil {
		return false, err
	}
	return f.Match(q), nil
}

package bolt

import (
	"bytes"
	"context"

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
		// Every key of the open index is an open question, so with no
		// filter only the questions on the page are read; the rest are
		// counted by their keys.
		all := f.All()
		var last []byte
		c := tx.Bucket(bucketOpen).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			before := after != nil && bytes.Compare(k, after) <= 0
			full := limit > 0 && len(p.Questions) == limit
			take := !before && !full
			var q *core.Question
			if take || !all {
				var err error
				if q, err = getQuestion(tx, idOfOpenKey(k)); err != nil {
					return err
				}
				if !f.Match(q) {
					continue
				}
			}
			p.Total++
			switch {
			case take:
				p.Questions, last = append(p.Questions, q), bytes.Clone(k)
			case full && !before && p.Next == "":
				p.Next = cursorEncoding.EncodeToString(last)
			}
		}
		return nil
	})
	return p, err
}

package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// SearchClosed walks the closed index backwards, newest close first, in
// one read transaction, and keeps the questions cq matches. The cursor is
// the last index key read, so a page resumes right before it however many
// questions closed in the same millisecond.
func (s *Store) SearchClosed(_ context.Context, cq core.ClosedQuery, cursor string, limit, scan int) (core.ClosedPage, error) {
	const op = "search closed"
	var before []byte
	if cursor != "" {
		var err error
		before, err = cursorEncoding.DecodeString(cursor)
		if err != nil || len(before) <= 8 {
			return core.ClosedPage{}, core.Errorf(core.CodeInvalid, op, "cursor %q is not one this store made", cursor)
		}
	}
	var page core.ClosedPage
	err := s.view(op, func(tx *bbolt.Tx) error {
		page = core.ClosedPage{}
		c := tx.Bucket(bucketClosed).Cursor()
		k := seekBefore(c, before, cq.To)
		var floor []byte
		if !cq.From.IsZero() {
			floor = msKey(cq.From)
		}
		read := 0
		for ; k != nil && (floor == nil || bytes.Compare(k[:8], floor) >= 0); k, _ = c.Prev() {
			if (limit > 0 && len(page.Questions) == limit) || (scan > 0 && read == scan) {
				page.Next = cursorEncoding.EncodeToString(afterKey(k))
				page.ReadTo = timeOfKey(k)
				return nil
			}
			read++
			q, err := getQuestion(tx, idOfTimeKey(k))
			if err != nil {
				return err
			}
			if cq.Match(q) {
				page.Questions = append(page.Questions, q)
			}
		}
		return nil
	})
	return page, err
}

// seekBefore places c on the newest key strictly before before, or, for
// the first page, on the newest key before to (the newest of all when to
// is zero). It returns nil when there is none.
func seekBefore(c *bbolt.Cursor, before []byte, to time.Time) []byte {
	if before == nil && !to.IsZero() {
		before = msKey(to)
	}
	if before == nil {
		k, _ := c.Last()
		return k
	}
	// Seek lands on the first key at or after before; the one before it
	// is the newest strictly before.
	if k, _ := c.Seek(before); k == nil {
		k, _ = c.Last()
		return k
	}
	k, _ := c.Prev()
	return k
}

// afterKey is the cursor for resuming at k itself: the smallest key
// above it, so that "strictly before" keeps k.
func afterKey(k []byte) []byte { return append(bytes.Clone(k), 0) }

// timeOfKey is the time a timeIDKey starts with.
func timeOfKey(k []byte) time.Time {
	return time.UnixMilli(int64(binary.BigEndian.Uint64(k[:8]) ^ (1 << 63))).UTC()
}

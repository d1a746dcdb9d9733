package bolt

import (
	"math"
	"sync"

	"github.com/askbridge/askbridge/core"
)

// watchedCopies keeps a copy of each watched question, so that the reads
// a watch causes decode nothing: the waiter's first read, the answer's
// read to compute its change, and each waiter's read after its wake-up.
// With 1,000 long polls woken by 50 answerers those decodes were a
// quarter of the bridge's CPU (BENCHMARKS.md). It is the embedded store's
// counterpart of the Redis store's read cache, and simpler: this Store is
// the file's only writer, so it is told of every change.
//
// Invariants (each has its test in copies_test.go or in the store suite's
// WatchedReadsFollowTheStoresWrites):
//
//   - Bounded: an entry exists exactly while its id is watched (the watch
//     set's First and Last hooks); nothing is kept of an unwatched id.
//   - A copy is the question as the file held it at its Version: the
//     question a committed write wrote (wrote), or one a read found (read).
//   - Every committed write of a watched id is told, with the version it
//     wrote, before the id's watchers wake; a purge is told as the last
//     version there can be (math.MaxInt64), and nothing is kept after it.
//   - Newest wins: writes committed together are told from their callers'
//     goroutines in any order, and a read may end after a write it did not
//     see was told, so a copy replaces what is kept only if its version is
//     newer than any told or read. So once a write's caller has it back,
//     no read gets a copy older than that write. (A read that overlaps a
//     write may get the copy from before it, as it may get the file's; a
//     change computed from it is refused by Commit's compare, and core
//     reads again.)
//   - A read is kept only in the entry that existed when it began
//     (lookup's ticket): if the watch ended and began again meanwhile, a
//     write told in between reached no entry, and the new one would not
//     know the read is older.
//
// A copy handed out is a shallow copy: callers own the struct and treat
// its slices as read-only, as they do any question a Store returns.
type watchedCopies struct {
	mu sync.Mutex
	m  map[core.QuestionID]*copyEntry // exactly the watched ids
}

// copyEntry is what is kept of one watched id.
type copyEntry struct {
	q   *core.Question // the question at version ver; nil if none is kept
	ver int64          // the newest version told or read; -1 before any
}

// watch starts keeping id: its first watch has begun.
func (c *watchedCopies) watch(id core.QuestionID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[core.QuestionID]*copyEntry)
	}
	c.m[id] = &copyEntry{ver: -1}
}

// unwatch drops everything kept of id: its last watch has stopped.
func (c *watchedCopies) unwatch(id core.QuestionID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}

// wrote tells of a committed write of q.
func (c *watchedCopies) wrote(q *core.Question) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[q.ID].keep(q.Version, q)
}

// wroteRecord tells of a committed write of id's question at version
// ver, as record: decoded (outside the lock) only if id is watched, so
// that the copy is what a read of the file would find. A record that
// does not decode leaves no copy, only its version told, and the next
// read fills it from the file.
func (c *watchedCopies) wroteRecord(id core.QuestionID, ver int64, record []byte) {
	c.mu.Lock()
	watched := c.m[id] != nil
	c.mu.Unlock()
	if !watched {
		return // a watch begun since reads the file, which has the write
	}
	q, err := decodeQuestion(record)
	if err != nil {
		q = nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[id].keep(ver, q)
}

// purged tells that id's question is gone.
func (c *watchedCopies) purged(id core.QuestionID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[id].keep(math.MaxInt64, nil)
}

// lookup is a copy of id's question if one is kept; else the ticket a
// read of the file hands read when it ends (nil if id is not watched).
func (c *watchedCopies) lookup(id core.QuestionID) (*core.Question, *copyEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[id]
	if e != nil && e.q != nil {
		q := *e.q
		return &q, nil
	}
	return nil, e
}

// read offers q, as a read of the file begun with ticket found it.
func (c *watchedCopies) read(ticket *copyEntry, q *core.Question) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ticket != nil && c.m[q.ID] == ticket {
		ticket.keep(q.Version, q)
	}
}

// keep keeps q (nil: nothing) as the entry's copy at version ver, if that
// is newer than any told or read. A nil entry (an unwatched id) keeps
// nothing. The caller holds the copies' lock.
func (e *copyEntry) keep(ver int64, q *core.Question) {
	if e == nil || ver <= e.ver {
		return
	}
	e.ver, e.q = ver, nil
	if q != nil {
		cp := *q
		e.q = &cp
	}
}

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
func (c *watchedCopies) wrote(q *core.Question) { c.keep(q.ID, q.Version, q) }

// read offers q as a read of the file found it.
func (c *watchedCopies) read(q *core.Question) { c.keep(q.ID, q.Version, q) }

// purged tells that id's question is gone.
func (c *watchedCopies) purged(id core.QuestionID) { c.keep(id, math.MaxInt64, nil) }

// keep keeps q (nil: nothing) as id's copy at version ver, if that is
// newer than any told or read.
func (c *watchedCopies) keep(id core.QuestionID, ver int64, q *core.Question) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[id]
	if e == nil || ver <= e.ver {
		return
	}
	e.ver, e.q = ver, nil
	if q != nil {
		cp := *q
		e.q = &cp
	}
}

// get is a copy of id's question, if one is kept.
func (c *watchedCopies) get(id core.QuestionID) (*core.Question, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[id]; e != nil && e.q != nil {
		q := *e.q
		return &q, true
	}
	return nil, false
}

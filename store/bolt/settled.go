package bolt

import (
	"math"
	"sync"

	"github.com/askbridge/askbridge/core"
)

// settledCopies keeps, for each watched question this Store has closed,
// the question as its close left it, so that the reads a close causes
// (each waiter's read after its wake-up) decode nothing: with 1,000 long
// polls woken by 50 answerers that decode was a seventh of the bridge's
// CPU (BENCHMARKS.md). It is the embedded store's counterpart of the
// Redis store's read cache, and simpler: this Store is the file's only
// writer, so it knows every change.
//
// Invariants (each has its test in settled_test.go):
//
//   - Bounded: an entry exists exactly while its id is watched (the watch
//     set's First and Last hooks); nothing is kept of an unwatched id.
//   - A copy is a closed question exactly as a committed close wrote it,
//     with its Version. A closed question changes only by a card recorded
//     later, or by its purge.
//   - Every committed write of a watched id is told (wrote) with the
//     version it wrote, before the id's watchers wake: a close keeps its
//     question, any other write drops the copy, a purge (math.MaxInt64)
//     drops it for good. Writes are told from their callers' goroutines
//     after their commits, so two writes of one id committed together can
//     be told in either order: a write older than the newest told is
//     ignored, so a copy never trails a write that was told.
//
// A copy handed out is a shallow copy: callers own the struct and treat
// its slices as read-only, as they do any question a Store returns.
type settledCopies struct {
	mu sync.Mutex
	m  map[core.QuestionID]*settledEntry // exactly the watched ids
}

// settledEntry is what is kept of one watched id.
type settledEntry struct {
	q   *core.Question // closed, as this Store's close left it; nil if none
	ver int64          // the newest version a write told; -1 before any
}

// watch starts keeping id: its first watch has begun.
func (c *settledCopies) watch(id core.QuestionID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[core.QuestionID]*settledEntry)
	}
	c.m[id] = &settledEntry{ver: -1}
}

// unwatch drops everything kept of id: its last watch has stopped.
func (c *settledCopies) unwatch(id core.QuestionID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}

// wrote tells of a committed write of id at version ver; after is the
// question it wrote if the write closed it, else nil.
func (c *settledCopies) wrote(id core.QuestionID, ver int64, after *core.Question) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[id]
	if e == nil || ver <= e.ver {
		return
	}
	e.ver, e.q = ver, nil
	if after != nil && !after.Open() {
		cp := *after
		e.q = &cp
	}
}

// purged tells that id's question is gone.
func (c *settledCopies) purged(id core.QuestionID) { c.wrote(id, math.MaxInt64, nil) }

// get is a copy of id's question as its close left it, if one is kept.
func (c *settledCopies) get(id core.QuestionID) (*core.Question, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[id]; e != nil && e.q != nil {
		q := *e.q
		return &q, true
	}
	return nil, false
}

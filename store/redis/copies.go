package redis

import (
	"sync"
	"sync/atomic"

	"github.com/askbridge/askbridge/core"
)

// readCache keeps, for each question a local watcher waits on, what this
// Store last knew of it, so that the reads the wait causes (the waiter's
// own after a wake-up, an answer's ReadToChange) need no round trip. It is
// worth it: with 1,000 long polls woken by 50 answerers the waiters' p50
// was 0.6x what it was without it, and one click on a watched question
// took half as long (BENCHMARKS.md, "The read cache, kept").
//
// Invariants (each has its test in copies_test.go):
//
//   - Bounded: an entry exists exactly while its id is watched (watch,
//     unwatch); the last watcher's stop drops everything kept of the id.
//     Nothing is kept of an unwatched id, so the cache never holds more
//     entries than there are watched questions.
//   - A copy is the question as Redis held it at some moment, with the
//     Version it had then: it may trail the store, never lead it. The only
//     sources are a read's reply (readEnds) and this Store's own
//     successful close (endWrite with the question the close left); a
//     failed or unanswered write (a lost reply) keeps nothing.
//   - settled: a closed question as this Store's own close left it. Every
//     read (Get) gets it: a closed question's state and resolution never
//     change again; what can (a card recorded later, elsewhere) is at worst
//     as stale as the watchers' last read would be. A wake-up from pub/sub
//     keeps it; this Store's next write of the id drops it.
//   - fresh: an open question as a read returned it, kept only if no
//     wake-up for the id, no later read, no write by this Store and no
//     doubt about the subscription came while that read was out (a read
//     overtaken by a wake-up may have read Redis before the change). Only
//     ReadToChange hands it out: Commit's script writes a change only while
//     the question is still at the version the change was computed from,
//     so a copy that trails a change made elsewhere (by as long as that
//     change's wake-up takes to arrive) costs one refused script, and core
//     reads again with Get. A closed question is never a fresh copy.
//   - Every wake-up drops the id's fresh copy and read out; a lost or
//     doubtful subscription (lost) drops them all, and while the
//     subscription is in doubt (distrust .. trust) no read is kept.
//   - Echo suppression: while this Store's own write of a watched id is
//     in flight (beginWrite .. endWrite), a wake-up for the id from pub/sub
//     is not passed on to the watchers (remote reports false): it is most
//     likely the write's own echo, which can arrive before the reply and
//     would send every watcher to Redis for what the reply is about to
//     leave here. Nothing is lost: endWrite is always called, and its
//     caller then signals the watchers.
//
// Every copy handed out or taken in is a shallow copy of the question:
// callers own the struct, and treat its slices as read-only, as they do
// any question a Store returns.
//
// readCache has its own lock, taken after Store.mu when both are held
// (Watch); it never calls back into the Store.
type readCache struct {
	mu      sync.Mutex
	entries map[core.QuestionID]*cacheEntry // exactly the watched ids
	// trusted is false while the wake-up subscription may be losing
	// messages: no read is kept meanwhile. Written under mu, read without
	// it only by trust's fast path.
	trusted atomic.Bool
}

// cacheEntry is what is kept of one watched id.
type cacheEntry struct {
	settled *core.Question
	fresh   *core.Question
	read    *readTicket // the latest read out, nil once it may not be kept
	writes  int         // this Store's writes of the id in flight
}

// readTicket marks one read of a watched question. It is not empty, so
// that two tickets are never the same pointer.
type readTicket struct{ _ byte }

// writeTicket marks one write of a question by this Store (beginWrite).
type writeTicket struct {
	id core.QuestionID
	e  *cacheEntry // nil if the id was not watched when the write began
}

func newReadCache() *readCache {
	c := &readCache{entries: make(map[core.QuestionID]*cacheEntry)}
	c.trusted.Store(true)
	return c
}

// watch marks id as watched: its first watcher has started.
func (c *readCache) watch(id core.QuestionID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries[id] == nil {
		c.entries[id] = &cacheEntry{}
	}
}

// unwatch drops everything kept of id: its last watcher has stopped.
func (c *readCache) unwatch(id core.QuestionID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, id)
}

// size is the number of ids anything is kept for.
func (c *readCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// settledCopy is id's settled copy, if one is kept.
func (c *readCache) settledCopy(id core.QuestionID) (*core.Question, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[id]; e != nil && e.settled != nil {
		q := *e.settled
		return &q, true
	}
	return nil, false
}

// freshCopy is id's fresh copy, if one is kept.
func (c *readCache) freshCopy(id core.QuestionID) (*core.Question, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[id]; e != nil && e.fresh != nil {
		q := *e.fresh
		return &q, true
	}
	return nil, false
}

// readStarts is called before a read of id goes to Redis. For a watched
// id it returns the ticket readEnds needs to keep what the read returns
// (and makes any earlier read out unkeepable); nil otherwise.
func (c *readCache) readStarts(id core.QuestionID) *readTicket {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[id]
	if e == nil {
		return nil
	}
	e.read = &readTicket{}
	return e.read
}

// readEnds keeps q, what the read with ticket t returned (nil for an error
// or no question), as id's fresh copy if q is open and t is still id's
// read out: no wake-up, later read, write of this Store or doubt about
// the subscription came in between, and id is still watched.
func (c *readCache) readEnds(id core.QuestionID, t *readTicket, q *core.Question) {
	if t == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[id]
	if e == nil || e.read != t {
		return
	}
	e.read = nil
	if q != nil && q.Open() && c.trusted.Load() {
		cp := *q // the caller owns q
		e.fresh = &cp
	}
}

// beginWrite is called before this Store runs a script that changes id;
// endWrite, always, after it.
func (c *readCache) beginWrite(id core.QuestionID) writeTicket {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[id]
	if e != nil {
		e.writes++
	}
	return writeTicket{id: id, e: e}
}

// endWrite ends the write w began. after is the question as the write
// left it, or nil if that is unknown (the script failed, or its reply was
// lost). A close's result becomes id's settled copy; anything else drops
// whatever is kept of id, since this Store has changed it.
func (c *readCache) endWrite(w writeTicket, after *core.Question) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.e != nil {
		w.e.writes--
	}
	e := c.entries[w.id]
	if e == nil {
		return
	}
	e.fresh, e.read = nil, nil
	if after != nil && !after.Open() {
		cp := *after
		e.settled = &cp
	} else {
		e.settled = nil
	}
}

// wrote drops whatever is kept of id: this Store has changed it (a write
// that needs no echo suppression, such as a card recorded).
func (c *readCache) wrote(id core.QuestionID) {
	c.endWrite(c.beginWrite(id), nil)
}

// remote drops id's fresh copy and read out: a wake-up for id came
// through pub/sub, from another replica or this Store's own echo. The
// settled copy stays (a question closes once, and only this Store's close
// leaves one). It reports whether id's watchers are to be signalled: not
// while a write of this Store's own is in flight (see echo suppression).
func (c *readCache) remote(id core.QuestionID) (signal bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[id]
	if e == nil {
		return true
	}
	e.fresh, e.read = nil, nil
	return e.writes <= 0
}

// lost drops every fresh copy and read out: wake-ups may have been lost.
func (c *readCache) lost() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropFresh()
}

// dropFresh drops every fresh copy and read out; c.mu is held.
func (c *readCache) dropFresh() {
	for _, e := range c.entries {
		e.fresh, e.read = nil, nil
	}
}

// distrust says the subscription may be losing wake-ups: until trust, no
// read is kept, and none kept so far is handed out.
func (c *readCache) distrust() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trusted.Store(false)
	c.dropFresh()
}

// trust says the subscription delivers again (a message or pong came).
// A read that went out while it was in doubt is not kept: a wake-up for a
// change made after that read may have been lost. Called for every
// message, so it costs one atomic load while nothing is in doubt.
func (c *readCache) trust() {
	if c.trusted.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.trusted.Load() {
		c.dropFresh()
		c.trusted.Store(true)
	}
}

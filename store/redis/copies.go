package redis

import "github.com/askbridge/askbridge/core"

// copies is what a Store keeps of the questions its local watchers wait
// on, so that the reads those waits cause need no round trip. All of it
// is guarded by Store.mu, and all of an id's copies go when its last
// watcher stops.
//
//   - settled: the question as this Store's own close of it left it (see
//     settledCopy). Every read gets it: a closed question's state and
//     resolution never change again.
//   - fresh: an open question as a read of it returned, kept only while no
//     wake-up for it has arrived since that read was sent. Only
//     ReadToChange hands it out, because a change computed from it is
//     written only while the question is still at the copy's version
//     (resolve.lua): a copy that trails a change made elsewhere, by as
//     long as that change's wake-up takes to arrive, costs at most the
//     script sending the question back as stale.
//   - reads: for each watched id, the latest read on its way, so that a
//     wake-up arriving while a read is out keeps that read from becoming a
//     fresh copy (it may have read Redis before the change).
//
// Every wake-up drops the id's fresh copy and read; a resubscription,
// after which wake-ups may have been lost, drops them all.
type copies struct {
	settled map[core.QuestionID]*core.Question
	fresh   map[core.QuestionID]*core.Question
	reads   map[core.QuestionID]*readTicket
}

// readTicket marks one read of a watched question. It is not empty, so
// that two tickets are never the same pointer.
type readTicket struct{ _ byte }

func newCopies() copies {
	return copies{
		settled: make(map[core.QuestionID]*core.Question),
		fresh:   make(map[core.QuestionID]*core.Question),
		reads:   make(map[core.QuestionID]*readTicket),
	}
}

// forget drops everything kept of id: its last watcher has stopped, or
// this Store changed it.
func (c *copies) forget(id core.QuestionID) {
	delete(c.settled, id)
	delete(c.fresh, id)
	delete(c.reads, id)
}

// stale drops id's fresh copy and read: a wake-up for id has arrived.
func (c *copies) stale(id core.QuestionID) {
	delete(c.fresh, id)
	delete(c.reads, id)
}

// staleAll drops every fresh copy and read: wake-ups may have been lost.
func (c *copies) staleAll() {
	clear(c.fresh)
	clear(c.reads)
}

// readStarts is called before a read of id goes to Redis. For a watched
// id it returns the ticket that readEnds needs to keep what the read
// returns; nil otherwise.
func (s *Store) readStarts(id core.QuestionID) *readTicket {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.watchers[id]) == 0 {
		return nil
	}
	t := &readTicket{}
	s.kept.reads[id] = t
	return t
}

// readEnds keeps q, what the read with ticket t returned, as id's fresh
// copy if q is open, id is still watched, neither a wake-up for id nor a
// later read came in between, and the subscription is not in doubt (see
// distrust).
func (s *Store) readEnds(id core.QuestionID, t *readTicket, q *core.Question) {
	if t == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kept.reads[id] != t {
		return
	}
	delete(s.kept.reads, id)
	if q != nil && q.Open() && len(s.watchers[id]) > 0 && s.subscribed.Load() {
		c := *q // the caller owns q
		s.kept.fresh[id] = &c
	}
}

// freshCopy is id's fresh copy, if one is kept (see copies).
func (s *Store) freshCopy(id core.QuestionID) (*core.Question, bool) {
	return s.copyFrom(s.kept.fresh, id)
}

// settledCopy is the question as this Store's own close of it left it,
// while a local watcher still waits on it: the waiters that close wakes
// (often hundreds at once on a busy replica) then read it without a round
// trip each. A closed question's state and resolution never change again;
// what can (a card recorded after the close, here or on another replica)
// is at worst as stale as the watchers' last read of it, and the copy is
// dropped when the last watcher stops or this Store writes id again.
func (s *Store) settledCopy(id core.QuestionID) (*core.Question, bool) {
	return s.copyFrom(s.kept.settled, id)
}

// copyFrom is a copy of what m, one of s.kept's maps, keeps of id; the
// caller owns it.
func (s *Store) copyFrom(m map[core.QuestionID]*core.Question, id core.QuestionID) (*core.Question, bool) {
	s.mu.Lock()
	q := m[id]
	s.mu.Unlock()
	if q == nil {
		return nil, false
	}
	c := *q
	return &c, true
}

package bolt

import (
	"testing"

	"github.com/askbridge/askbridge/core"
)

const copyID = core.QuestionID("aaaaaaaaaaaaaaaaa")

func at(ver int64, st core.State) *core.Question {
	return &core.Question{ID: copyID, State: st, Version: ver}
}

// get is a copy of id's question, if one is kept.
func (c *watchedCopies) get(id core.QuestionID) (*core.Question, bool) {
	q, _ := c.lookup(id)
	return q, q != nil
}

// readNow offers q as a read that began and ended now.
func readNow(c *watchedCopies, q *core.Question) {
	_, ticket := c.lookup(q.ID)
	c.read(ticket, q)
}

// TestWatchedCopiesAreBounded: copies are kept only while their id is
// watched.
func TestWatchedCopiesAreBounded(t *testing.T) {
	var c watchedCopies
	c.wrote(at(1, core.StateAnswered))
	readNow(&c, at(1, core.StateAnswered))
	if _, ok := c.get(copyID); ok {
		t.Fatal("kept a copy of an unwatched id")
	}
	c.watch(copyID)
	readNow(&c, at(1, core.StateOpen))
	if q, ok := c.get(copyID); !ok || q.Version != 1 {
		t.Fatalf("after a read: %+v, %v", q, ok)
	}
	c.wrote(at(2, core.StateAnswered))
	if q, ok := c.get(copyID); !ok || q.Version != 2 || q.State != core.StateAnswered {
		t.Fatalf("after the close: %+v, %v", q, ok)
	}
	c.unwatch(copyID)
	if _, ok := c.get(copyID); ok || len(c.m) != 0 {
		t.Fatalf("kept %d entries after the last watch stopped", len(c.m))
	}
}

// TestWatchedCopiesNewestWins: writes committed together are told in any
// order, and a read may end after a write it did not see was told; an
// older copy offered after a newer one changes nothing, and nothing is
// kept after a purge.
func TestWatchedCopiesNewestWins(t *testing.T) {
	var c watchedCopies
	c.watch(copyID)
	_, early := c.lookup(copyID)       // a read from before both writes
	c.wrote(at(3, core.StateAnswered)) // a card recorded after the close, told first
	c.wrote(at(2, core.StateAnswered)) // the close, told late
	c.read(early, at(1, core.StateOpen))
	if q, ok := c.get(copyID); !ok || q.Version != 3 {
		t.Fatalf("kept %+v, want version 3", q)
	}
	c.purged(copyID)
	readNow(&c, at(3, core.StateAnswered)) // a read of the file from before the purge
	c.wrote(at(4, core.StateAnswered))
	if q, ok := c.get(copyID); ok {
		t.Fatalf("a copy after the purge: %+v", q)
	}
}

// TestWatchedCopyIsTheCallersOwn: a copy handed out may be changed by its
// taker, and the question written by its writer, without changing what
// is kept.
func TestWatchedCopyIsTheCallersOwn(t *testing.T) {
	var c watchedCopies
	c.watch(copyID)
	written := at(1, core.StateAnswered)
	c.wrote(written)
	written.State = core.StateOpen
	got, _ := c.get(copyID)
	got.Version = 9
	if again, _ := c.get(copyID); again.State != core.StateAnswered || again.Version != 1 {
		t.Fatalf("the kept copy changed with its writer's or taker's: %+v", again)
	}
}

// TestWatchedCopiesKeepNoReadFromAnEarlierWatch: a read begun while an
// earlier watch of the id stood, ending after it stopped and a new one
// began, is not kept: the write told in between reached no entry.
func TestWatchedCopiesKeepNoReadFromAnEarlierWatch(t *testing.T) {
	var c watchedCopies
	c.watch(copyID)
	_, ticket := c.lookup(copyID) // the read begins, and finds version 4
	c.unwatch(copyID)
	c.wrote(at(5, core.StateAnswered)) // told while nothing is watched
	c.watch(copyID)
	c.read(ticket, at(4, core.StateOpen))
	if q, ok := c.get(copyID); ok {
		t.Fatalf("kept version %d, older than the write told before", q.Version)
	}
	readNow(&c, at(5, core.StateAnswered))
	if q, ok := c.get(copyID); !ok || q.Version != 5 {
		t.Fatalf("a read of the new watch: %+v, %v", q, ok)
	}
}

// TestWatchedCopiesFromARecord: a write told as its record (a change the
// store made itself) is decoded into a copy only for a watched id; a
// record that does not decode keeps no copy, but its version is told, so
// a read begun before it cannot keep an older copy.
func TestWatchedCopiesFromARecord(t *testing.T) {
	record := func(q *core.Question) []byte {
		t.Helper()
		b, err := encodeQuestion(q)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var c watchedCopies
	c.wroteRecord(copyID, 1, record(at(1, core.StateOpen)))
	if len(c.m) != 0 {
		t.Fatalf("kept %d entries for an unwatched id", len(c.m))
	}
	c.watch(copyID)
	c.wroteRecord(copyID, 1, record(at(1, core.StateOpen)))
	if q, ok := c.get(copyID); !ok || q.Version != 1 || q.State != core.StateOpen {
		t.Fatalf("after a record: %+v, %v", q, ok)
	}
	c.unwatch(copyID)
	c.watch(copyID)
	_, ticket := c.lookup(copyID) // a read begun before the next write
	c.wroteRecord(copyID, 2, []byte(`{"v":1,"q":`))
	if q, ok := c.get(copyID); ok {
		t.Fatalf("kept %+v from a record that does not decode", q)
	}
	c.read(ticket, at(1, core.StateOpen))
	if q, ok := c.get(copyID); ok {
		t.Fatalf("kept the older read %+v after version 2 was told", q)
	}
}
